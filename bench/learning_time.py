"""How long the issue-38 shipped models take to train from their recipes, on one core, over seeds.

    python bench/learning_time.py                       # induction, induction-1l, modular-add; seeds 0,1,2
    python bench/learning_time.py --models induction --seeds 0,1,2,3,4

Each run is `explorer.store.shipped.train_shipped` (the `pretrain` path: one thread, deterministic) with the
recipe's seed replaced; it prints wall and CPU seconds, the final metrics that decide the model (repeat_acc
for induction, val_exact for modular-add) and the median over seeds. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.store.shipped import shipped_model, train_shipped  # noqa: E402

DECIDES = {"induction": "repeat_acc", "induction-1l": "repeat_acc", "modular-add": "val_exact"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(DECIDES))
    p.add_argument("--seeds", default="0,1,2")
    args = p.parse_args()
    for name in args.models.split(","):
        base, walls = shipped_model(name), []
        for seed in (int(s) for s in args.seeds.split(",")):
            r = dataclasses.replace(base, train=dataclasses.replace(base.train, seed=seed))
            wall, cpu = time.perf_counter(), time.process_time()
            _, _, history = train_shipped(r)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            walls.append(wall)
            key = DECIDES.get(name, "val_exact")
            evaluated = [h for h in history if h.val_loss is not None]
            last = {"val_exact": evaluated[-1].val_exact, **dict(evaluated[-1].parts)} if evaluated else {}
            value = last.get(key)
            print(f"{name} seed {seed}: {wall:.1f} s wall, {cpu:.1f} s CPU, {len(history)} steps, {key} "
                  f"{'n/a' if value is None else f'{value:.4f}'}", flush=True)
        print(f"{name}: median {statistics.median(walls):.1f} s over {len(walls)} seeds", flush=True)


if __name__ == "__main__":
    main()
