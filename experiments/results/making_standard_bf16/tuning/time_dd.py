"""Time one double-dummy iteration of the default preset with bfloat16 play-outs and distillation (issue 46):
label 64,000 hands as iteration 9 would with `labels: rollout` (iteration 8's agent), then distil them with
iteration 8's data as the method does, from iteration 8's agent."""
import sys, time, json
from pathlib import Path
from types import SimpleNamespace

from euchre_env import Rules
from euchre_lab.making import method
from euchre_lab.making.options import Args

out = Path(sys.argv[1])
agent = "/work/runs/recipe/agents/iter_008.pt"
args = Args(progress=False)
(out / "data").mkdir(parents=True, exist_ok=True)
if not (out / "data" / "iter_008").exists():
    (out / "data" / "iter_008").symlink_to("/work/runs/recipe/data/iter_008")
run = SimpleNamespace(args=args, folder=out)
settings = method.teacher_settings(9, agent, args.seed, args.hands, "rollout")
print(settings, flush=True)
t = time.perf_counter()
facts = method.label(run, out / "data" / "iter_009", settings, args.hands)
label_s = time.perf_counter() - t
print("label", facts, f"{label_s:.1f} s", flush=True)
t = time.perf_counter()
facts = method.distil(run, 9, [out / "data" / "iter_008", out / "data" / "iter_009"], agent)
distil_s = time.perf_counter() - t
print("distil", facts, f"{distil_s:.1f} s", flush=True)
json.dump({"label_s": label_s, "distil_s": distil_s, "samples": facts["samples"]}, open(out / "times.json", "w"))
