"""What looking deeper than attention costs (explorer.interpret), as ratios against a reference in the same run.

    python bench/interpret.py [--repeats 5] [--examples 200] [--no-app]

1. Ablation: knocking out every head of a shipped model (`ablate(..., which=heads)`: the whole call, its own
   baseline pass, private copy and table included) against H baseline validation passes (`metrics` on the same
   examples, one batch each). The issue's budget: at most 1.3x. Also the page's whole table (every head,
   sublayer and FFN) computed, and read from pretrained/ablation/ (`interpret.stored`), its first view.
2. Logit lens: `lens_of` on one validation example against the model's own output on it
   (`views.output_distribution`); both make a private copy of the model first, as the page's do. Budget 2x.
   Also without the copies: the lens's forward pass and readouts against a bare forward pass.
3. The page: the script time of a rerun of each view of Inside the model once its caches are warm, against a
   rerun of the Attention page (whose view changes take ~0.2-0.5 s in the browser: bench/README.md,
   "The app"), under AppTest, in this process.

One thread (as the app's views run). Nothing is asserted: this prints figures for bench/README.md, with the
load average beside them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from explorer import interpret  # noqa: E402
from explorer.analysis import views  # noqa: E402
from explorer.interpret.lens import readouts  # noqa: E402
from explorer.interpret.parts import example_inputs, output_logits  # noqa: E402
from explorer.interpret.stored import stored  # noqa: E402
from explorer.store.subject import load_model  # noqa: E402

MODELS = ("reversal-fast", "order-pe", "char-lm")


def interleaved(fns: dict, repeats: int) -> dict:
    """Median seconds of each function, called in turn `repeats` times: on a shared machine the load drifts, and
    alternating keeps each ratio's two sides under the same load."""
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def ablation(name: str, repeats: int, n: int) -> str:
    model, task = load_model(name)
    private = copy.deepcopy(model).eval()
    heads = [p for p in interpret.parts(model) if p.head is not None]
    got = interleaved({"passes": lambda: [interpret.metrics(private, task, n) for _ in heads],
                       "ablate": lambda: interpret.ablate(model, task, n=n, which=heads)}, repeats)
    first = interleaved({"table": lambda: interpret.ablate(model, task, n=n),
                         "stored": lambda: stored(name, model, "zero", n)}, 1)
    return (f"{name:14s} {len(heads):3d} heads  {len(heads)} baseline passes {got['passes']:6.2f} s  "
            f"every head knocked out {got['ablate']:6.2f} s  ratio {got['ablate'] / got['passes']:.2f}  |  "
            f"whole table computed {first['table']:5.2f} s, stored {first['stored'] * 1000:4.0f} ms")


def lens(name: str, repeats: int) -> str:
    model, task = load_model(name)
    private = copy.deepcopy(model).eval()
    inp = example_inputs(task, 0)
    src, _ = task.example("val", 0)
    tgt_in = inp.args[1][0].tolist() if task.kind == "seq2seq" else None
    vocab = tuple(task.class_names) if task.kind == "classify" else tuple(task.vocab)

    def forward():
        with torch.inference_mode():
            output_logits(private, task, inp.args)
    got = interleaved({"output": lambda: views.output_distribution(model, task, src, tgt_in),
                       "lens": lambda: interpret.lens_of(model, task, inp, vocab),
                       "forward": forward, "readouts": lambda: readouts(private, task, inp)}, repeats * 10)
    return (f"{name:14s} output {got['output'] * 1000:6.2f} ms  lens {got['lens'] * 1000:6.2f} ms  ratio "
            f"{got['lens'] / got['output']:.2f}  |  bare forward {got['forward'] * 1000:5.2f} ms  lens readouts "
            f"{got['readouts'] * 1000:5.2f} ms  ratio {got['readouts'] / got['forward']:.2f}")


def page(repeats: int) -> list[str]:
    from streamlit.testing.v1 import AppTest

    from ui import inside, models

    def timed(at) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
            assert not at.exception, [e.value for e in at.exception]
        return statistics.median(times)

    lines = []
    for name in MODELS:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.query_params[models.PRETRAINED] = name
        at.run()
        at.switch_page("pages/attention.py").run()
        attention = timed(at)
        at.switch_page("pages/inside.py").run()
        timings = {}
        for view in inside.VIEWS:
            at.segmented_control(key=inside.VIEW).set_value(view).run()     # fills the caches
            timings[view] = timed(at)
        lines.append(f"{name:14s} Attention rerun {attention * 1000:5.0f} ms; Inside the model, cached: " +
                     ", ".join(f"{v} {t * 1000:.0f} ms" for v, t in timings.items()))
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--examples", type=int, default=200, help="validation examples an ablation measures")
    p.add_argument("--no-app", action="store_true", help="skip the page timings")
    args = p.parse_args()
    torch.set_num_threads(1)
    print(f"load average before: {os.getloadavg()}")
    print("1. ablation of every head vs H baseline validation passes")
    for name in MODELS:
        print("  " + ablation(name, args.repeats, args.examples))
    print("2. logit lens vs the model's own output, one example")
    for name in MODELS:
        print("  " + lens(name, args.repeats))
    if not args.no_app:
        print("3. page reruns (script time, AppTest)")
        for line in page(args.repeats):
            print("  " + line)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
