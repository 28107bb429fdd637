#!/usr/bin/python3
"""torch_train.py - data-parallel training in PyTorch with the gradients
exchanged over mpi4py, four ways.

Every rank holds the same model (fixed seed), runs forward and backward on
its own synthetic batch (made here, seeded by rank: no downloads), sums the
gradients over all ranks, divides by the number of ranks and takes an SGD
step.  The exchange is one of

  per-tensor      one blocking MPI_Allreduce per gradient tensor after the
                  backward pass, in the order autograd produced them
                  (MPI.IN_PLACE, MPI.SUM)
  bucket          PyTorch DDP's way: consecutive tensors in reverse parameter
                  order share flat buffers of at most --bucket bytes (a tensor
                  of the cap or more goes alone), one blocking MPI_Allreduce
                  per bucket after the backward pass
  In both blocking modes each p.grad is a view into its bucket's buffer
  (DDP's gradient_as_bucket_view; per tensor, each tensor is its own
  bucket), so autograd accumulates into the buffers and nothing is packed:
  the two differ only in their MPI calls.
  overlap         Horovod's way: a hook per parameter posts MPI_Iallreduce for
                  its gradient as soon as autograd produces it; MPI_Waitall
                  before the optimizer step
  overlap-bucket  the same with buckets filled in hook order, each posted as
                  MPI_Iallreduce when its last tensor arrives (any left at the
                  end of the backward pass are posted then)

Models (--model):
  mlp            25 Linear layers 58 -> 40 x 23 -> 10: 50 tensors, 40 B .. 9.28 kB,
                 40,490 parameters (162 kB a step)
  resnet20       ResNet-20 for 32x32 images (3 stages of 3 basic blocks, widths
                 16/32/64, BatchNorm, 1x1 projection shortcuts where the shape
                 changes): 65 tensors, 272,474 parameters (1.09 MB a step)
  resnet-stream  the same network 1.75x wider (28/56/112): 65 tensors,
                 830,966 parameters (3.32 MB a step), up to 452 kB per tensor

With --region every step is enclosed in MPI_Pcontrol(1, "step") ...
MPI_Pcontrol(-1, "step") and the exchange in "allreduce" (with overlap it
spans the backward pass it overlaps and the MPI_Waitall), as examples/dp_train
does.  mpi4py's MPI.Pcontrol passes no name, so the regions are opened by
calling MPI_Pcontrol through ctypes.  The warmup steps run with recording
paused (MPI_Pcontrol(0), then MPI_Pcontrol(1) resumes): a profile holds the
timed steps only.  Without a profiler listening to MPI_Pcontrol this does
nothing.

The bookkeeping after the run (timers, the check) uses its own communicator,
a duplicate of world named "aux", so that the all-reduces on world are the
gradient exchange and nothing else: tensors (or buckets) x steps per rank.
It makes AUX_ALLREDUCES calls of MPI_Allreduce on "aux" per rank.

With --timings DIR rank 0 writes the program's own times: steps.csv (per
step the slowest rank's time and the exchange's, mean and max over ranks,
and exchange_late_s, the late rank's exchange below)
and, in the blocking modes, calls.csv (per size the median, 10th and 90th
percentile over steps and ranks of one MPI_Allreduce as the program times
it, mpi4py's call included), gathered with MPI_Gather on "aux".

The program checks its own result: after the run every rank must hold
bitwise the same parameters (a checksum and a CRC-32 of the parameters,
compared with an all-reduce MAX of (x, -x)); otherwise it says so and exits 1.

Output (rank 0): '#' lines describing the run, then one line of key=value:
  step_ms_*       per step the slowest rank's time, then mean/median/min over steps
  exchange_ms_*   the time per step in the exchange (blocking: the all-reduce
                  loop with packing and unpacking; overlap: the time blocked in
                  MPI_Waitall): per step the mean over ranks, then its mean and
                  median over steps; _max: the largest rank's mean over steps
  exchange_late_ms_*  per step the exchange of the rank that waited least in
                  it, its posts included (overlap: blocked in MPI_Waitall plus
                  the hooks' calls): the last rank to arrive, whose exchange
                  the step waits for; the other ranks' longer exchange is their
                  wait for it.  Then its mean and median over steps
  post_ms_mean    overlap: time per step in the hooks' MPI_Iallreduce and
                  MPI_Testall calls (mean over ranks)
  wait_ms_mean    overlap: time per step in the MPI_Waitall call alone, without
                  the Python around it in the exchange (mean over ranks)
  poll_offcpu_ms_mean, poll_wall_ms_mean  with --poll-cpu (overlap): per step
                  the hooks' MPI_Testall calls that completed nothing, their time
                  off the CPU (wall time less the thread's CPU time, time.thread_time,
                  less what the two clocks read around nothing) and their wall time
                  (mean over ranks)
  preempted_per_step  involuntary context switches of the process per timed
                  step (getrusage ru_nivcsw, mean over ranks): the scheduler
                  taking the CPU from it, the machine's load as this run felt it
  tensors, params, bytes_per_step, buckets_per_step, bucket_bytes, steps,
  warmup, ranks, aux_allreduce, checksum, ranks_agree

Run with /usr/bin/python3 (Debian's python3-torch, python3-mpi4py):
  mpirun -np 2 /usr/bin/python3 examples/torch_train.py --model resnet20 --mode overlap
"""
import argparse
import ctypes
import os
import resource
import sys
import time
import zlib

os.environ.setdefault("OMP_NUM_THREADS", "1")

import mpi4py

# hooks run on the thread that calls backward() (CPU autograd runs there)
mpi4py.rc.thread_level = "funneled"
from mpi4py import MPI  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

AUX_ALLREDUCES = 5
MODES = ("per-tensor", "bucket", "overlap", "overlap-bucket")
MODELS = ("mlp", "resnet20", "resnet-stream")


# ------------------------------------------------------------------ models

def mlp():
    dims = [58] + [40] * 24 + [10]
    layers = []
    for i in range(25):
        layers.append(nn.Linear(dims[i], dims[i + 1]))
        if i < 24:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.short is None else self.short(x)))


class ResNet20(nn.Module):
    """He et al. 2016, CIFAR: 6n+2 = 20 layers, n = 3."""

    def __init__(self, width=16, classes=10):
        super().__init__()
        w = [width, 2 * width, 4 * width]
        self.conv = nn.Conv2d(3, w[0], 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(w[0])
        blocks, cin = [], w[0]
        for stage, c in enumerate(w):
            for b in range(3):
                blocks.append(BasicBlock(cin, c, 2 if stage > 0 and b == 0 else 1))
                cin = c
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(w[2], classes)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = self.blocks(x)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def build(name):
    if name == "mlp":
        return mlp(), (58,)
    if name == "resnet20":
        return ResNet20(16), (3, 32, 32)
    return ResNet20(28), (3, 32, 32)


# --------------------------------------------------------------- regions

class Pcontrol:
    """MPI_Pcontrol with a region name (mpi4py's passes none).  Looked up in
    the global scope, so a preloaded profiler's MPI_Pcontrol is the one
    called; without one, MPI's own (which does nothing)."""

    def __init__(self):
        self.f = None
        for lib in (None, "libmpi.so.40", "libmpi.so.12", "libmpi.so"):
            try:
                self.f = ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL).MPI_Pcontrol
                break
            except (OSError, AttributeError):
                continue
        if self.f is not None:
            self.f.restype = ctypes.c_int

    def __call__(self, level, name=None):
        if self.f is None:
            MPI.Pcontrol(level)
        elif name is None:
            self.f(ctypes.c_int(level), ctypes.c_char_p(None))
        else:
            self.f(ctypes.c_int(level), ctypes.c_char_p(name.encode()))


# --------------------------------------------------------------- buckets

def make_buckets(order, nbytes, cap):
    """dp_train's rule (DDP's): tensors in the given order join the open
    bucket while it stays within cap bytes; one that does not fit starts the
    next; a bucket of cap bytes or more is closed.  cap 0: one per tensor."""
    buckets, cur, cur_bytes = [], [], 0
    for i in order:
        b = nbytes[i]
        if cur and (cap == 0 or cur_bytes + b > cap):
            buckets.append(cur)
            cur, cur_bytes = [], 0
        cur.append(i)
        cur_bytes += b
        if cur_bytes >= cap:
            buckets.append(cur)
            cur, cur_bytes = [], 0
    if cur:
        buckets.append(cur)
    return buckets


class Flat:
    """A bucket's flat buffer and where each tensor sits in it."""

    def __init__(self, idx, params):
        self.idx = idx
        self.off, n = [], 0
        for i in idx:
            self.off.append(n)
            n += params[i].numel()
        self.buf = torch.zeros(n, dtype=params[idx[0]].dtype)
        self.view = self.buf.numpy()
        self.nbytes = 4 * n

    def slot(self, k, p):
        return self.buf[self.off[k]:self.off[k] + p.numel()].view_as(p)


# --------------------------------------------------------------- timings

def write_timings(d, aux, rank, st, ex, late, calls, sizes):
    """The program's own times, gathered on the "aux" communicator (MPI_Gather:
    no all-reduce) and written by rank 0."""
    n = len(st)
    s_all = np.zeros((aux.Get_size(), n)) if rank == 0 else None
    e_all = np.zeros((aux.Get_size(), n)) if rank == 0 else None
    aux.Gather(np.ascontiguousarray(st), s_all, root=0)
    aux.Gather(np.ascontiguousarray(ex), e_all, root=0)
    c = np.array(calls, dtype=np.float64)
    c_all = np.zeros((aux.Get_size(), c.size)) if rank == 0 else None
    if c.size:
        aux.Gather(c, c_all, root=0)
    if rank != 0:
        return
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "steps.csv"), "w") as f:
        f.write("step,step_s,exchange_s_mean,exchange_s_max,exchange_late_s\n")
        for k in range(n):
            f.write("%d,%.6e,%.6e,%.6e,%.6e\n" % (k, s_all[:, k].max(), e_all[:, k].mean(), e_all[:, k].max(), late[k]))
    if not c.size:
        return
    per = len(sizes)
    by = {}
    for k in range(c.size):
        by.setdefault(sizes[k % per], []).extend(c_all[:, k])
    with open(os.path.join(d, "calls.csv"), "w") as f:
        f.write("size_bytes,calls,median_s,p10_s,p90_s\n")
        for b in sorted(by):
            v = np.array(by[b])
            f.write("%d,%d,%.6e,%.6e,%.6e\n" % (b, v.size, np.median(v), np.percentile(v, 10), np.percentile(v, 90)))


# ------------------------------------------------------------------ main

def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=MODELS, default="resnet20")
    ap.add_argument("--mode", choices=MODES, default="per-tensor")
    ap.add_argument("--bucket", type=int, default=25 << 20,
                    help="bucket cap in bytes for bucket and overlap-bucket (default 25 MiB, DDP's)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first, with recording paused")
    ap.add_argument("--batch", type=int, default=0, help="samples per rank (default mlp 32, resnets 4)")
    ap.add_argument("--region", action="store_true", help='mark MPI_Pcontrol regions "step" and "allreduce"')
    ap.add_argument("--no-progress", action="store_true",
                    help="overlap: do not call MPI_Testall from the hooks (progress only in MPI_Waitall)")
    ap.add_argument("--poll-cpu", action="store_true",
                    help="overlap: time each hook's MPI_Testall against the thread's CPU time (poll_offcpu_ms_mean)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timings", metavar="DIR",
                    help="write DIR/steps.csv (per step: the slowest rank's time, the exchange's) and, blocking "
                         "modes, DIR/calls.csv (per size: the median time of one MPI_Allreduce over steps and ranks)")
    ap.add_argument("--verbose", action="store_true", help="print the buckets")
    a = ap.parse_args()
    if a.steps < 1 or a.warmup < 0 or a.bucket < 0 or a.batch < 0:
        ap.error("--steps >= 1, --warmup, --bucket and --batch >= 0")
    if a.batch == 0:
        a.batch = 32 if a.model == "mlp" else 4
    return a


def main():
    a = parse()
    torch.set_num_threads(1)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    aux = comm.Dup()
    aux.Set_name("aux")
    pc = Pcontrol()

    torch.manual_seed(a.seed)  # the same model on every rank
    model, shape = build(a.model)
    params = [p for p in model.parameters()]
    nbytes = [4 * p.numel() for p in params]
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1000 * a.seed + rank)  # each rank its own data
    x = torch.randn((a.batch,) + shape, generator=g)
    y = torch.randint(0, 10, (a.batch,), generator=g)

    # the order autograd produces the gradients in: one backward pass without MPI
    seen = []
    hs = [p.register_hook(lambda grad, i=i: seen.append(i)) for i, p in enumerate(params)]
    F.cross_entropy(model(x), y).backward()
    for h in hs:
        h.remove()
    order = list(dict.fromkeys(seen))
    if sorted(order) != list(range(len(params))):
        sys.exit("torch_train: the dry backward pass produced %d of %d gradients" % (len(order), len(params)))
    model.zero_grad(set_to_none=True)

    mode = a.mode
    cap = a.bucket if mode in ("bucket", "overlap-bucket") else 0
    if mode == "bucket":
        groups = make_buckets(list(reversed(range(len(params)))), nbytes, cap)
    else:
        groups = make_buckets(order, nbytes, cap)
    flats = [Flat(b, params) for b in groups]
    nb = len(groups)
    blocking = not mode.startswith("overlap")
    if blocking:
        # DDP's gradient_as_bucket_view: each p.grad is a view into its
        # bucket's flat buffer, so autograd accumulates into the buffer and
        # the exchange packs nothing.  Per tensor, each tensor is a bucket of
        # its own: the two modes differ only in their MPI calls.
        for f in flats:
            for j, i in enumerate(f.idx):
                params[i].grad = f.slot(j, params[i])

    # overlap: hooks post the reductions
    state = {"reqs": [], "arrived": [0] * nb, "posted": [False] * nb, "post_s": 0.0, "wait_s": 0.0, "on": False,
             "poll_off_s": 0.0, "poll_wall_s": 0.0}
    where = {}
    for k, b in enumerate(groups):
        for j, i in enumerate(b):
            where[i] = (k, j)

    # --poll-cpu: what the two clocks read around nothing (their own calls,
    # on the CPU), the median of 201 tries, taken off each poll's reading
    clock_bias = 0.0
    if a.poll_cpu:
        tries = []
        for _ in range(201):
            w0, c0 = time.perf_counter(), time.thread_time()
            c1, w1 = time.thread_time(), time.perf_counter()
            tries.append((w1 - w0) - (c1 - c0))
        clock_bias = sorted(tries)[100]

    def post(k):
        t0 = time.perf_counter()
        state["reqs"].append(comm.Iallreduce(MPI.IN_PLACE, flats[k].view, op=MPI.SUM))
        state["posted"][k] = True
        if not a.no_progress and a.poll_cpu:
            # the poll's time off the CPU: its wall time less this thread's CPU time
            w0, c0 = time.perf_counter(), time.thread_time()
            done = MPI.Request.Testall(state["reqs"])
            c1, w1 = time.thread_time(), time.perf_counter()
            if not done:
                state["poll_off_s"] += max(0.0, (w1 - w0) - (c1 - c0) - clock_bias)
                state["poll_wall_s"] += w1 - w0
        elif not a.no_progress:
            MPI.Request.Testall(state["reqs"])
        state["post_s"] += time.perf_counter() - t0

    def hook(grad, i):
        if not state["on"]:
            return None
        k, j = where[i]
        flats[k].slot(j, params[i]).copy_(grad)
        state["arrived"][k] += 1
        if state["arrived"][k] == len(groups[k]):
            post(k)
        return None

    if mode.startswith("overlap"):
        # torch >= 2.1 calls a post-accumulate hook with the parameter once
        # p.grad holds the gradient; before that, a hook on the tensor gets
        # the gradient on its way into p.grad
        for i, p in enumerate(params):
            if hasattr(p, "register_post_accumulate_grad_hook"):
                p.register_post_accumulate_grad_hook(lambda q, i=i: hook(q.grad, i))
            else:
                p.register_hook(lambda grad, i=i: hook(grad, i))

    calls = []  # blocking modes: each all-reduce's time, in call order

    def exchange():
        """Blocking modes: the all-reduces; overlap: wait for them.  Leaves
        the summed gradients in p.grad."""
        if blocking:
            for f in flats:
                t0 = time.perf_counter()
                comm.Allreduce(MPI.IN_PLACE, f.view, op=MPI.SUM)
                calls.append(time.perf_counter() - t0)
        else:
            for k in range(nb):  # the rest, at the end of the backward pass
                if not state["posted"][k]:
                    post(k)
            t0 = time.perf_counter()
            MPI.Request.Waitall(state["reqs"])
            state["wait_s"] += time.perf_counter() - t0
            for f in flats:
                for j, i in enumerate(f.idx):
                    params[i].grad = f.slot(j, params[i])

    def step(timed):
        # while recording is paused, MPI_Pcontrol(1, ...) would resume it:
        # the warmup steps open no regions
        region = a.region and timed
        t0 = time.perf_counter()
        p0 = state["post_s"]
        if region:
            pc(1, "step")
        # blocking modes keep their gradient views: zero them in place
        opt.zero_grad(set_to_none=not blocking)
        state["reqs"], state["arrived"], state["posted"] = [], [0] * nb, [False] * nb
        state["on"] = True
        overlap = mode.startswith("overlap")
        if region and overlap:
            pc(1, "allreduce")
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        state["on"] = False
        if region and not overlap:
            pc(1, "allreduce")
        t1 = time.perf_counter()
        p1 = state["post_s"]  # the hooks' posts; the exchange's own are in t2 - t1
        exchange()
        t2 = time.perf_counter()
        if region:
            pc(-1, "allreduce")
        for p in params:
            p.grad.div_(size)
        opt.step()
        if region:
            pc(-1, "step")
        return time.perf_counter() - t0, t2 - t1, p1 - p0, float(loss)

    if rank == 0:
        lo, hi = min(nbytes), max(nbytes)
        print("# torch_train: model=%s tensors=%d params=%d (%d B/step) ranks=%d torch=%s mpi4py=%s threads=%d"
              % (a.model, len(params), sum(p.numel() for p in params), sum(nbytes), size, torch.__version__,
                 mpi4py.__version__, torch.get_num_threads()))
        what = {"per-tensor": "MPI_Allreduce per tensor", "bucket": "MPI_Allreduce per bucket",
                "overlap": "MPI_Iallreduce per tensor from the hooks, MPI_Waitall",
                "overlap-bucket": "MPI_Iallreduce per bucket from the hooks, MPI_Waitall"}[mode]
        sizes = [f.nbytes for f in flats]
        print("# exchange: %s: %s -> %d calls/step (%d .. %d B)%s"
              % (mode, what, nb, min(sizes), max(sizes), " bucket=%d B" % cap if cap else ""))
        print("# steps=%d warmup=%d (recording paused) batch=%d region=%s tensors %d .. %d B"
              % (a.steps, a.warmup, a.batch, "on" if a.region else "off", lo, hi))
        if a.verbose:
            for k, b in enumerate(groups):
                print("#   bucket %3d: %d tensors, %d B" % (k, len(b), sum(nbytes[i] for i in b)))
        sys.stdout.flush()

    if a.warmup:
        pc(0)
        for _ in range(a.warmup):
            step(False)
        pc(1)  # while paused, level 1 resumes (its name is not read)
    comm.Barrier()
    st, ex, po = np.zeros(a.steps), np.zeros(a.steps), np.zeros(a.steps)
    t_run = time.perf_counter()
    csw0 = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
    post0, wait0, off0, pw0 = state["post_s"], state["wait_s"], state["poll_off_s"], state["poll_wall_s"]
    del calls[:]
    for s in range(a.steps):
        st[s], ex[s], po[s], loss = step(True)
    run_s = time.perf_counter() - t_run
    csw = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw - csw0
    post_s, wait_s = state["post_s"] - post0, state["wait_s"] - wait0
    poll_off, poll_wall = state["poll_off_s"] - off0, state["poll_wall_s"] - pw0

    # the check: every rank holds bitwise the same parameters
    flat = torch.cat([p.detach().reshape(-1) for p in params]).double().numpy()
    cs = float(np.dot(flat, 1.0 + np.arange(flat.size) % 7))
    crc = float(zlib.crc32(torch.cat([p.detach().reshape(-1) for p in params]).numpy().tobytes()))
    v = np.array([cs, -cs, crc, -crc])
    aux.Allreduce(MPI.IN_PLACE, v, op=MPI.MAX)
    agree = v[0] == -v[1] and v[2] == -v[3] and np.isfinite(cs)
    # the timers: per step the slowest rank; per rank the exchange and post time
    smax = st.copy()
    aux.Allreduce(MPI.IN_PLACE, smax, op=MPI.MAX)
    # per step the exchange summed over ranks (then the mean per step), and
    # the max over ranks of each rank's mean; then the per-step figures of tail
    tail = [post_s / a.steps, wait_s / a.steps, csw / a.steps, poll_off / a.steps, poll_wall / a.steps]
    tot, mx = np.append(ex, tail), np.array([ex.mean()])
    aux.Allreduce(MPI.IN_PLACE, tot, op=MPI.SUM)
    aux.Allreduce(MPI.IN_PLACE, mx, op=MPI.MAX)
    ex_step, per = tot[:-len(tail)] / size, tot[-len(tail):] / size
    # per step the exchange of the rank that waited least in it, its posts
    # included: the last to arrive, whose exchange the step waits for (the
    # others' longer time is their wait for it, set by the ranks' imbalance)
    late = ex + po
    aux.Allreduce(MPI.IN_PLACE, late, op=MPI.MIN)
    if a.timings:
        write_timings(a.timings, aux, rank, st, ex, late, calls,
                      [4 * params[i].numel() for i in order] if mode == "per-tensor" else [f.nbytes for f in flats])
    if rank == 0:
        print("torch_train: model=%s mode=%s ranks=%d steps=%d warmup=%d batch=%d tensors=%d params=%d "
              "bytes_per_step=%d buckets_per_step=%d bucket_bytes=%d step_ms_mean=%.4f step_ms_median=%.4f "
              "step_ms_min=%.4f exchange_ms_mean=%.4f exchange_ms_median=%.4f exchange_ms_max=%.4f "
              "exchange_late_ms_mean=%.4f exchange_late_ms_median=%.4f post_ms_mean=%.4f wait_ms_mean=%.4f "
              "preempted_per_step=%.2f %srun_s=%.4f "
              "loss=%.5f aux_allreduce=%d checksum=%.10e crc=%d ranks_agree=%s"
              % (a.model, mode, size, a.steps, a.warmup, a.batch, len(params), sum(p.numel() for p in params),
                 sum(nbytes), nb, cap, 1e3 * smax.mean(), 1e3 * np.median(smax), 1e3 * smax.min(),
                 1e3 * ex_step.mean(), 1e3 * np.median(ex_step), 1e3 * mx[0],
                 1e3 * late.mean(), 1e3 * np.median(late), 1e3 * per[0], 1e3 * per[1], per[2],
                 "poll_offcpu_ms_mean=%.4f poll_wall_ms_mean=%.4f " % (1e3 * per[3], 1e3 * per[4]) if a.poll_cpu else "",
                 run_s, loss,
                 AUX_ALLREDUCES, cs,
                 int(crc), "yes" if agree else "NO"))
        if not agree:
            print("torch_train: RANKS DISAGREE: checksum %.17g .. %.17g, crc %d .. %d"
                  % (-v[1], v[0], int(-v[3]), int(v[2])), file=sys.stderr)
        sys.stdout.flush()
    aux.Free()
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
