"""optim.lr_scheduler: every scheduler's lr (and momentum) sequence over many steps equals
PyTorch's exactly; hand-derived values without PyTorch; state_dict round trips; errors."""

import math
import warnings

import pytest

import autograd
from autograd import nn, optim
from autograd.optim import lr_scheduler as sched


def _optimizer(lib, name="SGD", groups=2):
    """An optimizer of lib (autograd or torch) over `groups` groups with lrs 0.1, 0.2, ..."""
    P = lib.nn.Parameter
    kw = {"momentum": 0.9} if name == "SGD" else {}
    return getattr(lib.optim, name)(
        [{"params": [P(lib.zeros(2))], "lr": 0.1 * (i + 1)} for i in range(groups)], **kw)


def _sequence(lib, make, steps=40, name="SGD", metric=None):
    """[(lrs, momenta)] after each step of the scheduler make(lr_scheduler, optimizer)."""
    opt = _optimizer(lib, name)
    s = make(lib.optim.lr_scheduler, opt)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(steps):
            opt.step()
            if metric is None:
                s.step()
            else:
                s.step(metric(i))
            out.append((list(s.get_last_lr()),
                        [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    return out, s


SCHEDULERS = {
    "StepLR": lambda L, o: L.StepLR(o, 3, 0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, [2, 5, 5, 9], 0.3),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, 0.9),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, 7, 0.001),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, 3, 2, 0.001),
    "LambdaLR": lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e),
    "LambdaLR-list": lambda L, o: L.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97),
    "LinearLR": lambda L, o: L.LinearLR(o, 0.2, 0.9, 10),
    "ConstantLR": lambda L, o: L.ConstantLR(o, 0.5, 4),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, 12, 2.0),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=40),
    "OneCycleLR-3": lambda L, o: L.OneCycleLR(o, [1.0, 2.0], epochs=4, steps_per_epoch=10,
                                              three_phase=True, anneal_strategy="linear"),
    "CyclicLR": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 4, 3, mode="triangular2"),
    "CyclicLR-exp": lambda L, o: L.CyclicLR(o, [0.01, 0.02], 0.1, 4, mode="exp_range",
                                            gamma=0.97),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=5), L.ExponentialLR(o, 0.9),
            L.CosineAnnealingLR(o, 10)], [5, 15]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.1, 4),
                                                         L.ExponentialLR(o, 0.9)]),
}


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_sequence_equals_pytorch(key, opt_name):
    torch = pytest.importorskip("torch")
    ours, s = _sequence(autograd, SCHEDULERS[key], name=opt_name)
    theirs, t = _sequence(torch, SCHEDULERS[key], name=opt_name)
    assert ours == theirs
    assert s.state_dict().keys() == t.state_dict().keys()


PLATEAU = [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.1,
                        threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.05]),
           dict(patience=1, cooldown=1, eps=0.05), dict(mode="max", threshold_mode="rel"),
           dict(threshold_mode="abs", patience=0, min_lr=0.02)]
METRIC = [1, 0.9, 0.9, 0.9, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7, 0.71, 0.7, 0.7, 0.7,
          0.7, 0.7, 0.7, 0.7, 0.75, 0.8, 0.9, 1.0, 1.0, 1.0] * 2


@pytest.mark.parametrize("kw", PLATEAU)
def test_reduce_on_plateau_equals_pytorch(kw):
    torch = pytest.importorskip("torch")
    make = lambda L, o: L.ReduceLROnPlateau(o, **kw)  # noqa: E731
    ours, s = _sequence(autograd, make, metric=METRIC.__getitem__)
    theirs, t = _sequence(torch, make, metric=lambda i: torch.tensor(METRIC[i]))
    assert ours == theirs
    assert s.state_dict().keys() == t.state_dict().keys()


# -- hand-derived, without PyTorch ---------------------------------------------------------------

def _lrs(make, steps):
    return [lrs[0] for lrs, _ in _sequence(autograd, make, steps)[0]]


def test_values_by_hand():
    assert _lrs(lambda L, o: L.StepLR(o, 2, 0.5), 5) == pytest.approx(
        [0.1, 0.05, 0.05, 0.025, 0.025])
    assert _lrs(lambda L, o: L.MultiStepLR(o, [1, 3, 3], 0.1), 4) == pytest.approx(
        [0.01, 0.01, 0.0001, 0.0001])
    cos = _lrs(lambda L, o: L.CosineAnnealingLR(o, 4), 8)
    assert cos == pytest.approx([0.05 * (1 + math.cos(math.pi * e / 4)) for e in range(1, 9)],
                                abs=1e-12)
    warm = _lrs(lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, 2), 7)
    t_cur = [1, 0, 1, 2, 3, 0, 1]
    t_i = [2, 4, 4, 4, 4, 8, 8]
    assert warm == pytest.approx([0.05 * (1 + math.cos(math.pi * c / i))
                                  for c, i in zip(t_cur, t_i)])
    assert _lrs(lambda L, o: L.LinearLR(o, 0.5, 1.0, 4), 5) == pytest.approx(
        [0.0625, 0.075, 0.0875, 0.1, 0.1])
    assert _lrs(lambda L, o: L.PolynomialLR(o, 4, 2.0), 5) == pytest.approx(
        [0.1 * 0.75 ** 2, 0.1 * 0.5 ** 2, 0.1 * 0.25 ** 2, 0.0, 0.0], abs=1e-15)
    assert _lrs(lambda L, o: L.ConstantLR(o, 0.5, 2), 3) == pytest.approx([0.05, 0.1, 0.1])
    one = _sequence(autograd, lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10,
                                                      anneal_strategy="linear"), 9)[0]
    # from 1/25 up to 1.0 over steps 0..2, then down to 1/25/1e4 at step 9
    assert one[1][0][0] == pytest.approx(1.0)
    assert one[1][1][0] == pytest.approx(0.85)  # momentum at its base at the peak
    assert one[-1][0][0] == pytest.approx(0.04 / 1e4)


def test_plateau_by_hand():
    opt = _optimizer(autograd, groups=1)
    s = sched.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1)
    lrs = []
    for metric in [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5]:
        s.step(metric)
        lrs.append(s.get_last_lr()[0])
    assert lrs == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025])


def test_initial_lr_base_lrs_and_last_epoch():
    opt = _optimizer(autograd)
    s = sched.StepLR(opt, 2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]
    assert s.base_lrs == [0.1, 0.2] and s.last_epoch == 0 and s.get_last_lr() == [0.1, 0.2]
    opt.param_groups[0]["lr"] = 1.0  # resuming keeps initial_lr
    s2 = sched.ExponentialLR(opt, 0.5, last_epoch=3)
    assert s2.base_lrs == [0.1, 0.2] and s2.last_epoch == 4
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(_optimizer(autograd), 2, last_epoch=5)


def test_state_dict_round_trip():
    def make(o):
        return sched.SequentialLR(o, [sched.ConstantLR(o, 0.5, 3),
                                      sched.CosineAnnealingLR(o, 10)], [3])
    opt = _optimizer(autograd)
    s = make(opt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(6):
            opt.step()
            s.step()
        sd = s.state_dict()
        assert "optimizer" not in sd and len(sd["_schedulers"]) == 2
        opt2 = _optimizer(autograd)
        s2 = make(opt2)  # the usual order: build, then load the optimizer's and its states
        opt2.load_state_dict(opt.state_dict())
        s2.load_state_dict(sd)
        for _ in range(8):
            s.step()
            s2.step()
            assert s.get_last_lr() == s2.get_last_lr()
    lam = sched.LambdaLR(_optimizer(autograd), lambda e: 1.0)
    assert lam.state_dict()["lr_lambdas"] == [None, None]


def test_warnings():
    opt = _optimizer(autograd)
    s = sched.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(5)
    assert s.get_last_lr() == pytest.approx([0.1 * 0.1 ** 2, 0.2 * 0.1 ** 2])  # closed form


def test_errors():
    opt = _optimizer(autograd)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        sched.StepLR(object(), 2)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError, match="between 0 and 1"):
        sched.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        sched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        sched.CosineAnnealingWarmRestarts(opt, 0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode foo is unknown"):
        sched.ReduceLROnPlateau(opt, mode="foo")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        sched.ReduceLROnPlateau(opt, min_lr=[0.1])
    with pytest.raises(ValueError, match="total_steps OR"):
        sched.OneCycleLR(opt, 1.0)
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        sched.OneCycleLR(opt, [1.0], total_steps=3)
    plain = optim.Adagrad([nn.Parameter(autograd.zeros(1))])
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        sched.CyclicLR(plain, 0.1, 1.0)
    with pytest.raises(ValueError, match="number of milestones"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2)], [1])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        sched.ChainedScheduler([sched.ReduceLROnPlateau(opt)])
    s = sched.OneCycleLR(opt, 1.0, total_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.step()
        s.step()
        with pytest.raises(ValueError, match="Tried to step 3 times"):
            s.step()
