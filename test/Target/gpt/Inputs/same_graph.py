# same_graph.py A.mlir B.mlir: whether two single-function wsgraph modules
# compute the same graph: the same ops with the same attributes and types,
# connected alike (whatever the order of the ops and the names of values),
# weights compared by shape only and constants by value (to 1e-6, as two fp32
# libms may round a cosine differently). Prints "same graph" and the counts,
# or the ops of each module that the other lacks.
import re
import struct
import sys

LINE = re.compile(r"^\s*(%[\w]+)(?::(\d+))? = ([\w.]+) (.*)$")


def constant_values(head):
    hexed = re.search(r'dense<"0x([0-9A-Fa-f]+)">', head)
    if hexed:
        raw = bytes.fromhex(hexed.group(1))
        return list(struct.unpack("<%df" % (len(raw) // 4), raw))
    body = head[head.index("dense<") + 6: head.rindex(">")]
    return [float(x) for x in re.findall(r"[-+]?[\d.]+(?:[eE][-+]?\d+)?", body)]


class Graph:
    def __init__(self, path, table):
        self.ops = {}  # signature id -> count
        self.func = None
        self.constants = 0
        names = {}
        for line in open(path):
            if "func.func" in line:
                self.func = re.sub(r"%\w+", "%", line.strip())
                names.update({a: ("arg", a) for a in re.findall(r"%arg\d+", line)})
                continue
            if line.strip().startswith("return"):
                operands = re.findall(r"%[\w#]+", line)
                self.result = tuple(names[o] for o in operands)
                continue
            m = LINE.match(line)
            if not m:
                continue
            name, count, op, rest = m.group(1), int(m.group(2) or 1), m.group(3), m.group(4)
            head, types = rest.rsplit(" : ", 1)
            if op == "wsgraph.weight":
                sig = ("weight", types)
            elif op == "wsgraph.constant":
                sig = ("constant", types, table.constant_class(constant_values(head)))
                self.constants += 1
            else:
                attrs = head[head.index("{"): head.rindex("}") + 1] if "{" in head else ""
                operands = tuple(names[o] for o in re.findall(r"%[\w#]+", head.split("{")[0]))
                sig = (op, attrs, types, operands)
            key = table.intern(sig)
            self.ops[key] = self.ops.get(key, 0) + 1
            if count == 1:
                names[name] = key
            for i in range(count):
                names["%s#%d" % (name, i)] = (key, i)


class Table:
    """Signatures interned to small ids, so that a signature names its operands by id."""

    def __init__(self):
        self.ids, self.sigs, self.classes, self.max_diff = {}, [], [], 0.0

    def intern(self, sig):
        if sig not in self.ids:
            self.ids[sig] = len(self.sigs)
            self.sigs.append(sig)
        return self.ids[sig]

    def constant_class(self, values):
        for i, other in enumerate(self.classes):
            if len(other) == len(values):
                diff = max((abs(a - b) for a, b in zip(values, other)), default=0.0)
                if diff <= 1e-6:
                    self.max_diff = max(self.max_diff, diff)
                    return i
        self.classes.append(values)
        return len(self.classes) - 1

    def describe(self, key):
        sig = self.sigs[key]
        return " ".join(str(x) for x in sig[:3])


table = Table()
a, b = Graph(sys.argv[1], table), Graph(sys.argv[2], table)
problems = []
if a.func != b.func:
    problems.append("signatures differ:\n  %s\n  %s" % (a.func, b.func))
for key in sorted(set(a.ops) | set(b.ops)):
    if a.ops.get(key, 0) != b.ops.get(key, 0):
        problems.append("%d x in A, %d x in B: %s" % (a.ops.get(key, 0), b.ops.get(key, 0),
                                                     table.describe(key)))
if a.result != b.result:
    problems.append("the returned values differ")
if problems:
    print("different graphs")
    print("\n".join(problems[:10]))
    sys.exit(1)
print("same graph: %d ops, %d constants, max constant difference %.1e"
      % (sum(a.ops.values()), a.constants, table.max_diff))
