"""PyTorch's own DistributedDataParallel on bench_ddp.py's workload, for the
side-by-side figures: the same MLP (64-1024-1024-10), rows, feature scale,
batch per rank, optimizer (AdamW with HF's defaults, gradient clipping at 1.0,
a linear schedule), one thread per process, Gloo on 127.0.0.1, ranks started
with torch.multiprocessing.spawn as PyTorch's tutorials do.

The step time is the whole loop of --steps steps divided by --steps, as
trainhook's train_runtime (all_results.json) is: the first steps included.
Writes {"step_seconds": s} (rank 0's) to --out.

usage: torch_ddp.py --data train.csv --steps N --world 1|2 --port P --out result.json
  --world 1: one plain process (no DDP wrapper, no process group)
  --world 2: two ranks under DDP (default bucket sizes, gradient_as_bucket_view off, as DDP's default)
"""
import argparse
import json
import os
import time


def load(path, scale):
    import torch
    rows = [list(map(float, line.split(","))) for line in open(path) if line.strip()]
    t = torch.tensor(rows, dtype=torch.float32)
    return t[:, :-1] * scale, t[:, -1].long()


def train(rank, world, o):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    torch.manual_seed(42)
    x, y = load(o.data, 0.0625)
    model = torch.nn.Sequential(torch.nn.Linear(64, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                torch.nn.ReLU(), torch.nn.Linear(1024, 10))
    if world > 1:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(o.port)
        dist.init_process_group("gloo", rank=rank, world_size=world)
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.0, eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, (o.steps - s) / o.steps))
    n = x.shape[0]
    per_epoch = n // (o.batch * world)
    g = torch.Generator().manual_seed(0)
    if world > 1:
        dist.barrier()
    start = time.perf_counter()
    order = None
    for step in range(o.steps):
        if step % per_epoch == 0:  # DistributedSampler: one shuffle per epoch, every rank its stride
            order = torch.randperm(n, generator=g)[rank::world]
        i = order[(step % per_epoch) * o.batch:(step % per_epoch + 1) * o.batch]
        loss = torch.nn.functional.cross_entropy(model(x[i]), y[i])
        loss.backward()
        loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        model.zero_grad()
    elapsed = time.perf_counter() - start
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        with open(o.out, "w") as f:
            json.dump({"step_seconds": elapsed / o.steps}, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--world", type=int, choices=(1, 2), required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--port", type=int, default=29511)
    ap.add_argument("--out", required=True)
    o = ap.parse_args()
    if o.world == 1:
        train(0, 1, o)
    else:
        import torch.multiprocessing as mp
        mp.spawn(train, args=(o.world, o), nprocs=o.world, join=True)


if __name__ == "__main__":
    main()
