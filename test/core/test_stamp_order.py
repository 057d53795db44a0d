"""StampOrder: which joint states may replace the one in use, by header stamp, per joint set."""
import pytest

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.stamp_order import HOLD, StaleStampError, StampOrder

ARM = ("j1", "j2", "j3")
OTHER = ("k1",)
S = 1_000_000_000          # one second in nanoseconds


def test_newer_and_equal_stamps_are_accepted_older_ones_refused_naming_both_stamps():
    order = StampOrder()
    order.admit(ARM, 100 * S, now=0.0)
    order.admit(ARM, 100 * S + 2_000_000, now=0.002)
    order.admit(ARM, 100 * S + 2_000_000, now=0.004)          # a repeated state is harmless
    with pytest.raises(StaleStampError) as refused:
        order.admit(ARM, 98 * S + 500_000_000, now=0.006)      # a replay from 1.5 s earlier
    message = str(refused.value)
    assert "older than the one in use" in message
    assert "98.500000000 s" in message and "100.002000000 s" in message and "1502.0 ms newer" in message
    assert refused.value.stamp_ns == 98 * S + 500_000_000 and refused.value.newest_ns == 100 * S + 2_000_000
    assert isinstance(refused.value, InvalidInputError)        # nodes catch it with every other bad joint state


def test_a_refused_state_leaves_the_reference_unchanged():
    order = StampOrder()
    order.admit(ARM, 100 * S, now=0.0)
    for now in (0.01, 0.02, 0.03):
        with pytest.raises(StaleStampError):
            order.admit(ARM, 99 * S, now=now)
    order.admit(ARM, 100 * S + 1, now=0.04)


def test_the_order_is_per_joint_set_not_per_publisher():
    """A replaying publisher's stamps increase among themselves; they are still behind the arm's other source."""
    order = StampOrder()
    order.admit(ARM, 100 * S, now=0.0)
    order.admit(OTHER, 5 * S, now=0.001)                        # another joint set has its own order
    for i in range(3):                                           # increasing, but all older than 100 s
        with pytest.raises(StaleStampError):
            order.admit(ARM, 98 * S + i * 2_000_000, now=0.002 * (i + 1))


def test_unstamped_states_work_alone_and_are_refused_while_stamped_ones_arrive():
    alone = StampOrder()
    for now in (0.0, 0.002, 0.004):
        alone.admit(ARM, 0, now=now)                             # a simple publisher that never stamps
    alone.admit(ARM, 50 * S, now=0.006)                          # stamped after unstamped: accepted
    mixed = StampOrder()
    mixed.admit(ARM, 100 * S, now=0.0)
    with pytest.raises(StaleStampError, match=r"unstamped joint state \(stamp 0\) refused.*100\.000000000 s"):
        mixed.admit(ARM, 0, now=0.5)


def test_after_hold_without_stamped_states_any_stamp_is_followed():
    """A source restarted with its own clock (sim time from 0) is followed once the old one has been silent."""
    order = StampOrder(hold=0.5)
    assert StampOrder().hold == HOLD
    order.admit(ARM, 100 * S, now=10.0)
    with pytest.raises(StaleStampError):
        order.admit(ARM, 3 * S, now=10.49)
    order.admit(ARM, 3 * S, now=10.51)                           # the new reference
    with pytest.raises(StaleStampError):
        order.admit(ARM, 2 * S, now=10.52)
    order.admit(ARM, 0, now=11.02)                               # unstamped: no stamped state for 0.5 s
