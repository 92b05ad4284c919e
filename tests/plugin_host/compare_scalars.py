"""Compares the TensorBoard scalars of two runs (in process and isolated) read
with the `tensorboard` package: the same tags, the same steps, the same values
(float32) except the wall-clock ones (runtime, per-second rates, memory).

  compare_scalars.py <output_dir A> <output_dir B>
"""
import glob
import os
import sys

from tensorboard.backend.event_processing import event_accumulator

TIMING = ("runtime", "per_second", "_mem_", "memory")


def scalars(output_dir):
    files = glob.glob(os.path.join(output_dir, "runs", "*", "events.out.tfevents.*"))
    if len(files) != 1:
        sys.exit(f"compare_scalars: FAIL: {output_dir}: expected one event file, found {files}")
    acc = event_accumulator.EventAccumulator(files[0], size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


a, b = scalars(sys.argv[1]), scalars(sys.argv[2])
if sorted(a) != sorted(b):
    sys.exit(f"compare_scalars: FAIL: tags differ: {sorted(set(a) ^ set(b))}")
for tag in a:
    if [s for s, _ in a[tag]] != [s for s, _ in b[tag]]:
        sys.exit(f"compare_scalars: FAIL: {tag}: steps {[s for s, _ in a[tag]]} vs {[s for s, _ in b[tag]]}")
    if any(t in tag for t in TIMING):
        continue
    for (step, va), (_, vb) in zip(a[tag], b[tag]):
        if abs(va - vb) > 1e-6 * max(1.0, abs(va)):
            sys.exit(f"compare_scalars: FAIL: {tag} at step {step}: {va} vs {vb}")
print(f"compare_scalars: {len(a)} tags, {sum(len(v) for v in a.values())} scalars match")
