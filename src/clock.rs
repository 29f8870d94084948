//! A node's two clocks, monotonic and wall, as exact piecewise-linear maps of true time.
//!
//! `monotonic(t)` advances at `1 + drift` from its last anchor and never steps; it stops while a
//! `Stall` VM freeze lasts. An anchor keeps the fraction of a nanosecond the clock had accrued
//! (in parts per 10^12), so re-anchoring at a drift change or a freeze changes no later reading. `wall(t) = monotonic(t) + offset`, and only `offset` jumps, at clock
//! steps. Both directions are exact integers: [`NodeClock::read`] rounds a reading down,
//! [`NodeClock::reaches`] gives the first true nanosecond at which a reading reaches a deadline.
//! This module knows nothing of events or timers; the engine calls it and re-maps its timers
//! whenever a mapping changes.

use crate::time::{div_rate_one_floor, DriftRate, LocalDur, LocalTime, SimTime, RATE_ONE};
use serde::{Deserialize, Serialize};

/// Which of a node's clocks a timer or a validity check uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockKind {
    Monotonic,
    Wall,
}

/// One node's monotonic and wall clock.
#[derive(Clone, Debug)]
pub struct NodeClock {
    anchor_true: SimTime,
    anchor_mono: LocalTime,
    /// The fraction of a nanosecond past `anchor_mono` at the anchor, in parts per 10^12
    /// (`0 <= anchor_frac < RATE_ONE`): readings are `floor` of an exact rational.
    anchor_frac: i64,
    drift: DriftRate,
    stalled: bool,
    wall_offset: LocalDur,
}

impl NodeClock {
    /// A clock that reads 0 (monotonic) and `wall_offset` (wall) at true time 0.
    pub fn new(drift: DriftRate, wall_offset: LocalDur) -> NodeClock {
        NodeClock {
            anchor_true: SimTime::ZERO,
            anchor_mono: LocalTime::from_ns(0),
            anchor_frac: 0,
            drift,
            stalled: false,
            wall_offset,
        }
    }

    pub fn drift(&self) -> DriftRate {
        self.drift
    }

    pub fn is_stalled(&self) -> bool {
        self.stalled
    }

    /// The monotonic reading at true time `t` (at or after the last change of the mapping).
    pub fn mono(&self, t: SimTime) -> LocalTime {
        debug_assert!(t >= self.anchor_true, "clock read before its anchor");
        if self.stalled {
            return self.anchor_mono;
        }
        let elapsed = t.ns() - self.anchor_true.ns();
        // reading = anchor + floor((elapsed * (1e12 + ppt) + frac) / 1e12)
        //         = anchor + elapsed + floor((elapsed * ppt + frac) / 1e12)
        let extra = if self.drift.ppt == 0 {
            0 // frac < 1e12, so the floor is 0: exact without the division
        } else {
            div_rate_one_floor(elapsed as i128 * self.drift.ppt as i128 + self.anchor_frac as i128)
        };
        LocalTime::from_ns(
            self.anchor_mono
                .ns()
                .saturating_add(elapsed)
                .saturating_add(extra),
        )
    }

    /// The wall reading at true time `t`.
    pub fn wall(&self, t: SimTime) -> LocalTime {
        self.wall_of(self.mono(t))
    }

    /// The wall reading at the instant the monotonic clock reads `mono`.
    pub fn wall_of(&self, mono: LocalTime) -> LocalTime {
        mono + self.wall_offset
    }

    pub fn read(&self, kind: ClockKind, t: SimTime) -> LocalTime {
        match kind {
            ClockKind::Monotonic => self.mono(t),
            ClockKind::Wall => self.wall(t),
        }
    }

    /// The first true instant at or after `from` at which clock `kind` reads `deadline` or more,
    /// under the current mapping; [`SimTime::NEVER`] if a stalled clock has not reached it.
    pub fn reaches(&self, kind: ClockKind, deadline: LocalTime, from: SimTime) -> SimTime {
        let target_mono = match kind {
            ClockKind::Monotonic => deadline,
            ClockKind::Wall => deadline - self.wall_offset,
        };
        if self.mono(from) >= target_mono {
            return from;
        }
        if self.stalled {
            return SimTime::NEVER;
        }
        // mono(t) >= L  <=>  floor(((t - a) * rate + frac) / 1e12) >= L - m
        //               <=>  (t - a) * rate >= (L - m) * 1e12 - frac     (L - m is an integer)
        //               <=>  t - a >= ceil(((L - m) * 1e12 - frac) / rate)
        let needed = (target_mono.ns() as i128 - self.anchor_mono.ns() as i128) * RATE_ONE as i128
            - self.anchor_frac as i128;
        let rate = self.drift.rate() as i128;
        debug_assert!(rate > 0, "a validated clock runs forward");
        let elapsed = needed.div_euclid(rate) + i128::from(needed.rem_euclid(rate) != 0);
        let at = self.anchor_true.ns() as i128 + elapsed;
        if at >= i64::MAX as i128 {
            SimTime::NEVER
        } else {
            SimTime::from_ns(at as i64)
        }
    }

    /// Re-anchors the mapping at `t`, keeping the current reading and its fraction of a
    /// nanosecond, so that a change can start there without moving any later reading.
    fn reanchor(&mut self, t: SimTime) {
        debug_assert!(t >= self.anchor_true, "clock re-anchored before its anchor");
        if !self.stalled {
            let elapsed = t.ns() - self.anchor_true.ns();
            let total = elapsed as i128 * self.drift.ppt as i128 + self.anchor_frac as i128;
            let whole = total.div_euclid(RATE_ONE as i128);
            self.anchor_frac = total.rem_euclid(RATE_ONE as i128) as i64;
            let mono = self.anchor_mono.ns() as i128 + elapsed as i128 + whole;
            self.anchor_mono =
                LocalTime::from_ns(mono.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
        }
        self.anchor_true = t;
    }

    /// From `t` on, the clocks run at `1 + drift`.
    pub fn set_drift(&mut self, t: SimTime, drift: DriftRate) {
        self.reanchor(t);
        self.drift = drift;
    }

    /// Steps the wall clock by `by` (forward or back); the monotonic clock does not move.
    pub fn step_wall(&mut self, by: LocalDur) {
        self.wall_offset += by;
    }

    /// A stalled VM freeze begins: both clocks stop counting at `t`.
    pub fn stall(&mut self, t: SimTime) {
        self.reanchor(t);
        self.stalled = true;
    }

    /// The stalled freeze ends at `t`: the clocks resume from where they stopped.
    pub fn resume(&mut self, t: SimTime) {
        self.reanchor(t);
        self.stalled = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::LocalDur;

    const MONO: ClockKind = ClockKind::Monotonic;

    #[test]
    fn slow_clock_reaches_deadline_rounded_up() {
        // A -1000 ppm clock runs at 0.999. It reads 9.995 s at true 9.995 / 0.999 s
        // = 10.005005005005... s, so the first whole nanosecond is 10_005_005_006.
        let c = NodeClock::new(DriftRate::from_ppm_int(-1000), LocalDur::ZERO);
        let t = c.reaches(MONO, LocalTime::from_ns(9_995_000_000), SimTime::ZERO);
        assert_eq!(t, SimTime::from_ns(10_005_005_006));
        assert!(c.mono(t) >= LocalTime::from_ns(9_995_000_000));
        assert!(c.mono(SimTime::from_ns(t.ns() - 1)) < LocalTime::from_ns(9_995_000_000));
    }

    #[test]
    fn fast_clock_reads_ahead() {
        // +100 ppm: after 10 s of true time the clock reads 10 s + 10 s * 1e-4 = 10.001 s.
        let c = NodeClock::new(DriftRate::from_ppm_int(100), LocalDur::ZERO);
        assert_eq!(
            c.mono(SimTime::from_ns(10_000_000_000)),
            LocalTime::from_ns(10_001_000_000)
        );
    }

    #[test]
    fn backward_wall_step_delays_wall_deadline() {
        // Wall deadline 10 s on a perfect clock is reached at true 10 s; after a -500 ms step at
        // true 2 s the wall clock reads 500 ms less, so it reaches 10 s at true 10.5 s.
        let mut c = NodeClock::new(DriftRate::ZERO, LocalDur::ZERO);
        let dl = LocalTime::from_ns(10_000_000_000);
        assert_eq!(
            c.reaches(ClockKind::Wall, dl, SimTime::from_ns(2_000_000_000))
                .ns(),
            10_000_000_000
        );
        c.step_wall(LocalDur::from_ms(-500));
        assert_eq!(
            c.reaches(ClockKind::Wall, dl, SimTime::from_ns(2_000_000_000))
                .ns(),
            10_500_000_000
        );
        // The monotonic clock did not move.
        assert_eq!(
            c.reaches(MONO, dl, SimTime::from_ns(2_000_000_000)).ns(),
            10_000_000_000
        );
    }

    #[test]
    fn forward_wall_step_can_fire_at_once() {
        let mut c = NodeClock::new(DriftRate::ZERO, LocalDur::ZERO);
        c.step_wall(LocalDur::from_secs(20));
        let at = SimTime::from_ns(5_000_000_000);
        assert_eq!(
            c.reaches(ClockKind::Wall, LocalTime::from_ns(10_000_000_000), at),
            at
        );
    }

    #[test]
    fn stalled_freeze_leaves_clock_behind_by_its_length() {
        // An 8 s stalled freeze from true 1 s to 9 s: afterwards the clock reads true time - 8 s.
        let mut c = NodeClock::new(DriftRate::ZERO, LocalDur::ZERO);
        c.stall(SimTime::from_ns(1_000_000_000));
        assert_eq!(
            c.mono(SimTime::from_ns(5_000_000_000)),
            LocalTime::from_ns(1_000_000_000)
        );
        assert_eq!(
            c.reaches(
                MONO,
                LocalTime::from_ns(2_000_000_000),
                SimTime::from_ns(5_000_000_000)
            ),
            SimTime::NEVER
        );
        c.resume(SimTime::from_ns(9_000_000_000));
        assert_eq!(
            c.mono(SimTime::from_ns(20_000_000_000)),
            LocalTime::from_ns(12_000_000_000)
        );
        assert_eq!(
            c.wall(SimTime::from_ns(20_000_000_000)),
            LocalTime::from_ns(12_000_000_000)
        );
    }

    #[test]
    fn drift_change_keeps_reading_continuous() {
        // 0 ppm until 10 s (reads 10 s), then +1000 ppm: 10 s later it reads 10 + 10.01 = 20.01 s.
        let mut c = NodeClock::new(DriftRate::ZERO, LocalDur::ZERO);
        c.set_drift(
            SimTime::from_ns(10_000_000_000),
            DriftRate::from_ppm_int(1000),
        );
        assert_eq!(
            c.mono(SimTime::from_ns(10_000_000_000)),
            LocalTime::from_ns(10_000_000_000)
        );
        assert_eq!(
            c.mono(SimTime::from_ns(20_000_000_000)),
            LocalTime::from_ns(20_010_000_000)
        );
    }

    #[test]
    fn reanchoring_keeps_the_fraction_of_a_nanosecond() {
        // -333 ppm: at true 1.000000001 s the clock has run 1_000_000_001 * 0.999667
        // = 999_667_000.999667 ns, which reads 999_667_000. A re-anchor that dropped the .999667
        // would read one nanosecond less from then on, e.g. at true 10 s:
        // 10e9 * 0.999667 = 9_996_670_000 exactly, but 999_667_000 + 8_999_999_999 * 0.999667
        // = 9_996_669_999.000333 -> 9_996_669_999.
        let drift = DriftRate::from_ppm_int(-333);
        let plain = NodeClock::new(drift, LocalDur::ZERO);
        let mut changed = NodeClock::new(drift, LocalDur::ZERO);
        changed.set_drift(SimTime::from_ns(1_000_000_001), drift);
        assert_eq!(
            changed.mono(SimTime::from_ns(1_000_000_001)),
            LocalTime::from_ns(999_667_000)
        );
        assert_eq!(
            plain.mono(SimTime::from_ns(10_000_000_000)),
            LocalTime::from_ns(9_996_670_000)
        );
        for t in [
            1_000_000_001i64,
            1_000_000_002,
            5_000_000_003,
            10_000_000_000,
            3_600 * NS,
        ] {
            assert_eq!(
                changed.mono(SimTime::from_ns(t)),
                plain.mono(SimTime::from_ns(t)),
                "t = {t}"
            );
        }
        // The inverse too: the first instant reading 10 s is the same for both.
        let dl = LocalTime::from_ns(10_000_000_000);
        let want = plain.reaches(MONO, dl, SimTime::from_ns(1_000_000_001));
        assert_eq!(
            changed.reaches(MONO, dl, SimTime::from_ns(1_000_000_001)),
            want
        );
        // 10e9 / 0.999667 = 10_003_331_109.1... -> first whole nanosecond 10_003_331_110.
        assert_eq!(want, SimTime::from_ns(10_003_331_110));
        // A stalled freeze keeps the fraction too: stall and resume at the same instant.
        let mut frozen = NodeClock::new(drift, LocalDur::ZERO);
        frozen.stall(SimTime::from_ns(1_000_000_001));
        frozen.resume(SimTime::from_ns(1_000_000_001));
        assert_eq!(
            frozen.reaches(MONO, dl, SimTime::from_ns(1_000_000_001)),
            want
        );
    }

    const NS: i64 = 1_000_000_000;

    #[test]
    fn a_second_re_anchor_keeps_the_fraction_too() {
        // Two no-op changes: the second starts from an anchor that is not 0 and carries a
        // fraction. -333 ppm at true 2.500000003 s: 2_500_000_003 * 0.999667 = 2_499_167_502.
        // 999001 -> reads 2_499_167_502; from the anchor at 1.000000001 s (999_667_000 and
        // .999667) the same reading needs elapsed 1_500_000_002 * 0.999667 + 0.999667.
        let drift = DriftRate::from_ppm_int(-333);
        let plain = NodeClock::new(drift, LocalDur::ZERO);
        let mut changed = NodeClock::new(drift, LocalDur::ZERO);
        changed.set_drift(SimTime::from_ns(1_000_000_001), drift);
        changed.set_drift(SimTime::from_ns(2_500_000_003), drift);
        assert_eq!(
            changed.mono(SimTime::from_ns(2_500_000_003)),
            LocalTime::from_ns(2_499_167_502)
        );
        for t in [2_500_000_003i64, 7_777_777_777, 10_003_331_110, 3_600 * NS] {
            assert_eq!(
                changed.mono(SimTime::from_ns(t)),
                plain.mono(SimTime::from_ns(t)),
                "t = {t}"
            );
        }
        let dl = LocalTime::from_ns(10_000_000_000);
        assert_eq!(
            changed.reaches(MONO, dl, SimTime::from_ns(2_500_000_003)),
            SimTime::from_ns(10_003_331_110)
        );
        // A stall in between: 1 s frozen at 3 s, then the same rate. Afterwards the clock is
        // behind the plain one by exactly 1 s of its own time (0.999667 s): 2_999_001_000 at
        // 3 s, and at true 5 s it reads 2_999_001_000 + 1 s * 0.999667 = 3_998_668_000.
        changed.stall(SimTime::from_ns(3 * NS));
        assert!(changed.is_stalled());
        changed.resume(SimTime::from_ns(4 * NS));
        assert!(!changed.is_stalled());
        assert_eq!(
            changed.mono(SimTime::from_ns(5 * NS)),
            LocalTime::from_ns(3_998_668_000)
        );
        assert_eq!(changed.drift(), drift);
    }

    #[test]
    fn wall_is_monotonic_plus_offset() {
        // +100 ppm with a wall offset of 5 s: at true 10 s, monotonic 10.001 s, wall 15.001 s.
        let mut c = NodeClock::new(DriftRate::from_ppm_int(100), LocalDur::from_secs(5));
        let t = SimTime::from_ns(10 * NS);
        assert_eq!(c.read(MONO, t), LocalTime::from_ns(10_001_000_000));
        assert_eq!(
            c.read(ClockKind::Wall, t),
            LocalTime::from_ns(15_001_000_000)
        );
        assert_eq!(c.wall(t), LocalTime::from_ns(15_001_000_000));
        c.step_wall(LocalDur::from_ms(-2));
        assert_eq!(
            c.read(ClockKind::Wall, t),
            LocalTime::from_ns(14_999_000_000)
        );
    }

    #[test]
    fn reaches_is_the_exact_inverse_of_read() {
        for ppm in [-999_999i64, -1000, -37, 0, 1, 250, 100_000] {
            let c = NodeClock::new(DriftRate::from_ppm_int(ppm), LocalDur::ZERO);
            for l in [1i64, 999, 1_000_000_007, 86_400_000_000_000] {
                let t = c.reaches(MONO, LocalTime::from_ns(l), SimTime::ZERO);
                if t == SimTime::NEVER {
                    // Beyond i64 nanoseconds (~292 years): only the near-stopped clock gets here.
                    assert!(
                        l as f64 / (1.0 + ppm as f64 * 1e-6) > 9e18,
                        "ppm {ppm} l {l}"
                    );
                    continue;
                }
                assert!(c.mono(t).ns() >= l, "ppm {ppm} l {l}");
                assert!(
                    c.mono(SimTime::from_ns(t.ns() - 1)).ns() < l,
                    "ppm {ppm} l {l}"
                );
            }
        }
    }
}
