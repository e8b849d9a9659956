# merge_tree.py LOWERED.mlir: follows the partial softmaxes of a generating
# attention kernel (the first one) as its merges, sends and relays on "col"
# (rows above the finishing one, sending south) and "north" (rows below,
# sending north) move them, and prints, for each side, whether every row's
# partial reaches the finishing row exactly once and in how many levels
# (each level a merge on the receiving rows, a send and the relays between).
# The rows below the finishing one merge toward the row under it, which then
# joins them into the finishing row.
import re
import sys

text = open(sys.argv[1]).read()
start = re.search(r'wskernel\.kernel "[^"]*" kind "attention" grid \[(\d+), (\d+)\]', text)
h = int(start.group(1))
body = text[start.end():text.find('wskernel.kernel "', start.end())]
op = re.compile(r'wskernel\.(recv|send) "(col|north)" (?:to|from) [^{]*\{([^}]*)\}')


def rows_of(attrs):
    rows = set()
    for y0, y1 in re.findall(r"y0 = (\d+), y1 = (\d+)", attrs):
        rows.update(range(int(y0), int(y1) + 1))
    return rows


for port, step in (("col", 1), ("north", -1)):
    levels = []  # [merging rows, sending rows, relaying rows]
    for kind, p, attrs in op.findall(body):
        if p != port:
            continue
        if kind == "recv" and "forward" not in attrs:
            levels.append([rows_of(attrs), set(), set()])
        elif levels:
            levels[-1][1 if kind == "send" else 2] |= rows_of(attrs)
    held = {y: {y} for y in range(h)}
    twice = False
    for merging, sending, relaying in levels:
        for y in sorted(sending):
            to = y + step
            while to in relaying:
                to += step
            if to not in merging:
                print("%s: row %d's partial reaches row %d, which does not merge" % (port, y, to))
                sys.exit(1)
            twice |= bool(held[to] & held[y])
            held[to] |= held.pop(y)
    roots = [y for y in held if len(held[y]) > 1]
    root = roots[0] if len(roots) == 1 else None
    side = len(held[root]) if root is not None else 0
    # A tree over n rows takes ceil(log2(n)) levels; the lower side's tree
    # is rooted under the finishing row and joins it, one level more.
    print("%s: %d rows merge into row %s in %d levels (log2: %s), every partial once: %s" % (
        port, side, root, len(levels),
        "ok" if len(levels) <= (side - 1).bit_length() + 1 else "NO", "NO" if twice else "ok"))
