# edit_json.py BASE.json [KEY=JSON | -KEY]...: BASE with keys set (the value
# parsed as JSON) or removed, printed.
import json
import sys

config = json.load(open(sys.argv[1]))
for edit in sys.argv[2:]:
    if edit.startswith("-"):
        del config[edit[1:]]
    else:
        key, value = edit.split("=", 1)
        config[key] = json.loads(value)
print(json.dumps(config, indent=1))
