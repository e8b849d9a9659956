# hf_config.py EXPORT/config.json MODEL_TYPE OUT.json: the HuggingFace
# config.json of a model frontends/pytorch/export.py wrote (its "model"
# settings, which carry HF's key names, and the model_type).
import json
import sys

settings = json.load(open(sys.argv[1]))["model"]
json.dump(dict(settings, model_type=sys.argv[2]), open(sys.argv[3], "w"), indent=1, sort_keys=True)
