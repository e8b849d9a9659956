# corrupt_cache.py IN.mlir OUT.mlir: the first attention kernel writes each
# token's key where its value goes (a wrong address: the value overwrites
# it), so a generating program loses its keys. Prints how many writes it
# moved.
import re
import sys

text = open(sys.argv[1]).read()
start = text.index('kind "attention"')
end = text.index("wskernel.kernel", start)
body = text[start:end]
# Cache writes: receives guarded to the row that holds the token ("own").
own = re.compile(r'wskernel\.recv "[a-z0-9]+" to <base = (\d+)[^>]*>[^\n]*guard = \[#wskernel\.aff<base = 0, loop = \[1, 0\], py = -\d+>, #wskernel\.aff<base = \d+, loop = \[-1, 0\], py = \d+>\]')
bases = sorted({int(m.group(1)) for m in own.finditer(body)})
keys, values = bases[0], bases[1]
count = 0
lines = body.split("\n")
for i, line in enumerate(lines):
    if own.search(line) and "to <base = %d" % keys in line:
        lines[i] = line.replace("to <base = %d" % keys, "to <base = %d" % values, 1)
        count += 1
open(sys.argv[2], "w").write(text[:start] + "\n".join(lines) + text[end:])
print("cache writes moved:", count)
