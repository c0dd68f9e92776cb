"""Ctrl-C stops long runs cleanly: a subprocess gets SIGINT and must return what it has, with a warning.

``fit`` returns its ``FitResult`` so far (``stopped_early``, ``stop_reason="interrupted"``), as
``pm.sample`` does; RTS returns the estimate of the rounds that ended; AIS (in one thread and in two)
and BAR stop at once and return a NaN estimate marked interrupted, since their chains had not reached the target.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")

PRELUDE = """
import json, math, signal, sys, warnings
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises even where the parent ignores SIGINT
import numpy as np
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda message, *args, **kwargs: caught.append(str(message))
def ready():
    print("READY", flush=True)
"""

FIT = """
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.training import fit
said = [False]
def callback(step):
    if step.update == 50 and not said[0]:
        said[0] = True
        ready()
r = fit(bars_and_stripes(3), 9, method="pcd", n_updates=10**8, evaluation=20, progress=False, rng=0,
        callback=callback)
print(json.dumps({
    "n_updates": r.n_updates, "stopped_early": r.stopped_early, "stop_reason": r.stop_reason,
    "records": r.history.updates.tolist(), "ll": r.history.log_likelihood.tolist(),
    "finite": bool(np.all(np.isfinite(r.params.W))), "chains": r.chains is not None, "warnings": caught,
}))
"""

AIS = """
from pymc_rbm import RBMParams
from pymc_rbm.estimators import ais
p = RBMParams.random(20, 10, rng=0)
ready()
e = ais(p, n_chains=20, schedule=10**7, n_jobs=int(sys.argv[1]), rng=0)
print(json.dumps({"log_z": e.log_z, "interrupted": e.diagnostics.get("interrupted"),
                  "seconds": e.diagnostics["seconds"], "warnings": caught}))
"""

BAR = """
from pymc_rbm import RBMParams
from pymc_rbm.estimators import bar
p = RBMParams.random(20, 10, rng=0)
ready()
e = bar(p, n_chains=20, schedule=10**7, n_jobs=2, rng=0)
print(json.dumps({"log_z": e.log_z, "interrupted": e.diagnostics.get("interrupted"), "warnings": caught}))
"""

RTS = """
from pymc_rbm import RBMParams
from pymc_rbm.estimators import RTSRounds, StartOptions, rts
p = RBMParams.random(12, 6, scale=0.5, rng=0)
started = []
def callback(r, t, k, log_f):
    if r == 2 and not started:  # the first draw of the third round
        started.append(t)
        ready()
e = rts(p, n_chains=10, n_sweeps=100, rounds=RTSRounds(n_rounds=10**6), start=StartOptions(n_pilot=100), rng=0,
        callback=callback)
print(json.dumps({"log_z": e.log_z, "stderr": e.stderr, "interrupted": e.diagnostics["interrupted"],
                  "done": e.diagnostics["n_rounds_done"], "warnings": caught}))
"""

MOMENTS = """
from pymc_rbm import RBMParams
from pymc_rbm.estimators import moments_sampling
p = RBMParams.random(12, 6, scale=0.5, rng=0)
moments_sampling(p, n_chains=10, n_sweeps=5, burn_in=5, rng=0)  # compiles the kernels before the clock starts
ready()
m = moments_sampling(p, n_chains=10, n_sweeps=10**8, burn_in=int(sys.argv[1]), rng=0)
print(json.dumps({"v": m.v.tolist(), "interrupted": m.diagnostics["interrupted"], "n_sweeps": m.diagnostics["n_sweeps"],
                  "warnings": caught}))
"""


def _interrupt(script: str, *args: str, delay: float = 0.3, timeout: float = 120.0) -> dict:
    """Run ``script`` in a child Python, send SIGINT ``delay`` s after it prints READY, return its JSON line."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(PRELUDE + script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    got_ready = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if line.strip() == "READY":
                got_ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert got_ready.wait(timeout), f"the child never got ready: {proc.stderr.read() if proc.poll() is not None else ''}"
        time.sleep(delay)
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=timeout)
        stopped_after = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    err = proc.stderr.read()
    assert proc.returncode == 0, f"the child did not return cleanly (exit {proc.returncode}):\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    out = json.loads(lines[-1])
    out["stopped_after"] = stopped_after
    return out


def test_ctrl_c_during_fit_returns_the_result_so_far():
    out = _interrupt(FIT)
    assert out["stopped_early"] and out["stop_reason"] == "interrupted"
    assert 50 <= out["n_updates"] < 10**8
    assert out["records"][0] == 0 and len(out["records"]) >= 3  # every 20 updates until the interrupt
    assert all(ll == ll for ll in out["ll"]) and out["finite"] and out["chains"]
    assert any("fit was interrupted (Ctrl-C)" in w for w in out["warnings"]), out["warnings"]


@pytest.mark.parametrize("n_jobs", ["1", "2"])
def test_ctrl_c_during_ais_stops_at_once_with_a_nan_estimate(n_jobs):
    out = _interrupt(AIS, n_jobs, delay=1.0)
    assert out["log_z"] != out["log_z"] and out["interrupted"]  # NaN: the chains never reached the target
    assert out["stopped_after"] < 10.0  # the threads stopped too, instead of annealing 10**8 steps
    assert any("ais was interrupted (Ctrl-C)" in w for w in out["warnings"]), out["warnings"]


def test_ctrl_c_during_bar_stops_at_once_with_a_nan_estimate():
    out = _interrupt(BAR, delay=1.0)
    assert out["log_z"] != out["log_z"] and out["interrupted"]
    assert out["stopped_after"] < 10.0
    assert any("bar was interrupted (Ctrl-C)" in w for w in out["warnings"]), out["warnings"]


def test_ctrl_c_during_rts_returns_the_rounds_that_ended():
    out = _interrupt(RTS)
    assert out["interrupted"] and out["done"] >= 2
    assert out["log_z"] == out["log_z"] and out["stderr"] > 0
    assert any("RTS was interrupted (Ctrl-C)" in w for w in out["warnings"]), out["warnings"]


def test_an_interrupt_that_surfaces_from_compiled_code_is_still_an_interrupt():
    """Ctrl-C while Numba boxes a result gives SystemError caused by the KeyboardInterrupt: still a clean stop."""
    from pymc_rbm._runtime import StopOnInterrupt

    def compiled_like():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise SystemError("returned a result with an exception set") from err

    with StopOnInterrupt() as guard:
        compiled_like()
    assert guard.interrupted
    with pytest.raises(SystemError):  # an error that no interrupt caused goes through
        with StopOnInterrupt():
            raise SystemError("a real one")
    with StopOnInterrupt() as outer:  # inner blocks let it through to the outermost
        with StopOnInterrupt() as inner:
            raise KeyboardInterrupt
    assert outer.interrupted and not inner.interrupted


def test_ctrl_c_during_moments_sampling_returns_the_average_so_far():
    out = _interrupt(MOMENTS, "0", delay=1.0)
    assert out["interrupted"] and 0 < out["n_sweeps"] < 10**8
    assert all(0.0 <= x <= 1.0 for x in out["v"])
    assert any("moments_sampling was interrupted (Ctrl-C)" in w for w in out["warnings"]), out["warnings"]
    burn = _interrupt(MOMENTS, str(10**8), delay=1.0)  # still in the burn-in: nothing averaged
    assert burn["interrupted"] and burn["n_sweeps"] == 0
    assert any("no sweep was averaged" in w for w in burn["warnings"]), burn["warnings"]
