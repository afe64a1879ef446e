"""The worked example of docs/architecture.md: a unit model in one module (model.py) and its
Lava side in another (lava_side.py). Kept in its own folder because Lava imports every module
beside a Process when it looks for ProcessModels."""
