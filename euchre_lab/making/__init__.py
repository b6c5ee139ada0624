"""Making agents: one method, any table (`train.py --stage make`, presets `configs/recipe*.yaml`).

A run is a bootstrap and then N identical iterations, each a function from an agent to a better one at the same
budget (`method`); its state between iterations is the agent file and a small journal (`journal`); the driver
runs the parts in order, continues them where they stopped and prints the ETA (`driver`); agent.pt, the learning
curve and the model card are `card`'s. The options are `options`'.
"""
