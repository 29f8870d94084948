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

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// ceil(n / d) for d > 0.
fn div_ceil(n: i128, d: i128) -> i128 {
    n.div_euclid(d) + i128::from(n.rem_euclid(d) != 0)
}

/// Which of a node's clocks a timer or a validity check uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockKind {
    Monotonic,
    Wall,
    /// TT.now().earliest: the wall clock less the node's error bound (`clocks.uncertainty`).
    /// It falls while a stalled clock's error grows. Not a scenario field: protocols use it.
    #[serde(skip)]
    TtEarliest,
    /// TT.now().latest: the wall clock plus the node's error bound.
    #[serde(skip)]
    TtLatest,
}

impl ClockKind {
    /// True for the clocks a wall-clock step or sync moves.
    pub fn follows_wall(self) -> bool {
        !matches!(self, ClockKind::Monotonic)
    }
}

/// A node's TrueTime error bound (`clocks.uncertainty`): e = base + growth * (true time
/// since the last sync), kept exact, so that TT.now() = [wall - e, wall + e] (read with the
/// earliest bound rounded down and the latest up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorBound {
    pub base: LocalDur,
    /// The growth of e per unit of true time, in parts per 10^12.
    pub growth_ppt: i64,
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
    /// The error bound, when the scenario gives clocks one, and the true time of the last sync.
    bound: Option<(ErrorBound, SimTime)>,
    /// The most by which true time has lain outside [wall - e, wall + e], in ns, over the
    /// mapping's segments so far (see [`NodeClock::outside_interval_ns`]).
    max_outside_ns: i64,
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
            bound: None,
            max_outside_ns: 0,
        }
    }

    /// True when the scenario gives clocks an error bound (`clocks.uncertainty`).
    pub fn has_bound(&self) -> bool {
        self.bound.is_some()
    }

    /// The same clock with an error bound, synced last at true time 0.
    pub fn with_bound(mut self, bound: ErrorBound) -> NodeClock {
        self.bound = Some((bound, SimTime::ZERO));
        self
    }

    /// The monotonic reading at `t` as an exact rational, times 10^12.
    fn mono_num(&self, t: SimTime) -> i128 {
        let run = if self.stalled {
            0
        } else {
            (t.ns() - self.anchor_true.ns()) as i128 * self.drift.rate() as i128
        };
        self.anchor_mono.ns() as i128 * RATE_ONE as i128 + self.anchor_frac as i128 + run
    }

    /// The error bound e at `t` as an exact rational, times 10^12 (0 without a bound).
    fn error_num(&self, t: SimTime) -> i128 {
        self.bound.map_or(0, |(b, synced)| {
            b.base.ns() as i128 * RATE_ONE as i128
                + (t.ns() - synced.ns()).max(0) as i128 * b.growth_ppt as i128
        })
    }

    /// The wall reading at `t` as an exact rational, times 10^12.
    fn wall_num(&self, t: SimTime) -> i128 {
        self.mono_num(t) + self.wall_offset.ns() as i128 * RATE_ONE as i128
    }

    /// wall -/+ e at `t` (the earliest or latest bound) as an exact rational, times 10^12.
    fn tt_num(&self, kind: ClockKind, t: SimTime) -> i128 {
        let wall = self.wall_num(t);
        match kind {
            ClockKind::TtEarliest => wall - self.error_num(t),
            _ => wall + self.error_num(t),
        }
    }

    /// How far true time `t` lies outside the interval the node reads, [`TtEarliest`,
    /// `TtLatest`] = [floor(wall - e), ceil(wall + e)], in ns (0 inside it, and always 0
    /// without an error bound). As `t` is a whole nanosecond, t < floor(x) by floor(x - t) and
    /// t > ceil(y) by floor(t - y): the exact excess |wall - t| - e rounded down. A sync sets
    /// the wall clock's whole nanoseconds; the fraction below one it keeps from the monotonic
    /// clock never puts true time outside what the node reads.
    ///
    /// [`TtEarliest`]: ClockKind::TtEarliest
    /// [`TtLatest`]: ClockKind::TtLatest
    pub fn outside_interval_ns(&self, t: SimTime) -> i64 {
        if self.bound.is_none() {
            return 0;
        }
        let off = (self.wall_num(t) - t.ns() as i128 * RATE_ONE as i128).abs();
        let excess = off - self.error_num(t);
        if excess <= 0 {
            return 0;
        }
        clamp_i64(excess.div_euclid(RATE_ONE as i128))
    }

    /// The most by which true time has lain outside the interval, up to `t`. Between two
    /// changes of the mapping, |wall - t| is convex and e linear in t, so the excess is
    /// largest at one end of each segment: it is noted at every change and here.
    pub fn max_outside_interval_ns(&self, t: SimTime) -> i64 {
        self.max_outside_ns.max(self.outside_interval_ns(t))
    }

    fn note_outside(&mut self, t: SimTime) {
        self.max_outside_ns = self.max_outside_interval_ns(t);
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
            // earliest rounds down and latest up: the interval never narrows by rounding.
            ClockKind::TtEarliest => {
                LocalTime::from_ns(clamp_i64(self.tt_num(kind, t).div_euclid(RATE_ONE as i128)))
            }
            ClockKind::TtLatest => {
                LocalTime::from_ns(clamp_i64(div_ceil(self.tt_num(kind, t), RATE_ONE as i128)))
            }
        }
    }

    /// The first true instant at or after `from` at which clock `kind` reads `deadline` or more,
    /// under the current mapping; [`SimTime::NEVER`] if a stalled clock has not reached it.
    pub fn reaches(&self, kind: ClockKind, deadline: LocalTime, from: SimTime) -> SimTime {
        let target_mono = match kind {
            ClockKind::Monotonic => deadline,
            ClockKind::Wall => deadline - self.wall_offset,
            ClockKind::TtEarliest | ClockKind::TtLatest => {
                return self.tt_reaches(kind, deadline, from)
            }
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

    /// [`NodeClock::reaches`] for the TrueTime bounds: between changes of the mapping, wall -/+ e
    /// is one line of true time (slope `rate -/+ growth`, or `-/+ growth` while stalled), so
    /// one division inverts it. The earliest bound reads its floor, the latest its ceiling.
    fn tt_reaches(&self, kind: ClockKind, deadline: LocalTime, from: SimTime) -> SimTime {
        let one = RATE_ONE as i128;
        // floor(x / 1e12) >= D  <=>  x >= D * 1e12;  ceil(x / 1e12) >= D  <=>  x >= (D-1) * 1e12 + 1.
        let target = match kind {
            ClockKind::TtEarliest => deadline.ns() as i128 * one,
            _ => (deadline.ns() as i128 - 1) * one + 1,
        };
        let now = self.tt_num(kind, from);
        if now >= target {
            return from;
        }
        let run = if self.stalled {
            0
        } else {
            self.drift.rate() as i128
        };
        let growth = self.bound.map_or(0, |(b, _)| b.growth_ppt as i128);
        let slope = match kind {
            ClockKind::TtEarliest => run - growth,
            _ => run + growth,
        };
        if slope <= 0 {
            return SimTime::NEVER;
        }
        let at = from.ns() as i128 + div_ceil(target - now, slope);
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
        self.note_outside(t);
        self.reanchor(t);
        self.drift = drift;
    }

    /// Steps the wall clock by `by` (forward or back) at `t`; the monotonic clock does not move.
    pub fn step_wall(&mut self, t: SimTime, by: LocalDur) {
        self.note_outside(t);
        self.wall_offset += by;
        self.note_outside(t);
    }

    /// A clock sync at `t` (`clocks.uncertainty`): the wall clock is set to read `t + residual`
    /// and the error bound starts again from its base. The monotonic clock does not move.
    pub fn sync(&mut self, t: SimTime, residual: LocalDur) {
        self.note_outside(t);
        let target = LocalTime::from_ns(t.ns()) + residual;
        self.wall_offset = target - self.mono(t);
        if let Some((_, synced)) = &mut self.bound {
            *synced = t;
        }
        self.note_outside(t);
    }

    /// A stalled VM freeze begins: both clocks stop counting at `t`.
    pub fn stall(&mut self, t: SimTime) {
        self.note_outside(t);
        self.reanchor(t);
        self.stalled = true;
    }

    /// The stalled freeze ends at `t`: the clocks resume from where they stopped.
    pub fn resume(&mut self, t: SimTime) {
        self.note_outside(t);
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
        c.step_wall(SimTime::from_ns(2_000_000_000), LocalDur::from_ms(-500));
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
        c.step_wall(SimTime::ZERO, LocalDur::from_secs(20));
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
        c.step_wall(t, LocalDur::from_ms(-2));
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

#[cfg(test)]
mod truetime_tests {
    use super::*;
    use proptest::prelude::*;

    const NS: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;

    fn bounded(drift_ppm: i64, base_ms: i64, growth_ppm: i64) -> NodeClock {
        NodeClock::new(DriftRate::from_ppm_int(drift_ppm), LocalDur::ZERO).with_bound(ErrorBound {
            base: LocalDur::from_ms(base_ms),
            growth_ppt: DriftRate::from_ppm_int(growth_ppm).ppt,
        })
    }

    #[test]
    fn the_bounds_round_outward() {
        // +200 ppm, e = 1 ms + 200 ppm: at t = 4_003_800_161 the wall clock reads 1.0002 t =
        // 4_004_600_921.0322, e = 1_000_000 + 800_760.0322 = 1_800_760.0322; so latest =
        // ceil(4_006_401_681.0644) = 4_006_401_682 and earliest = floor(4_002_800_161) exactly.
        let c = bounded(200, 1, 200);
        let t = SimTime::from_ns(4_003_800_161);
        assert_eq!(c.read(ClockKind::TtLatest, t).ns(), 4_006_401_682);
        assert_eq!(c.read(ClockKind::TtEarliest, t).ns(), 4_002_800_161);
        assert_eq!(c.wall(t).ns(), 4_004_600_921);
        // Inside its bound: |wall - t| = 0.0002 t <= e.
        assert_eq!(c.outside_interval_ns(t), 0);
    }

    #[test]
    fn the_bounds_follow_the_mapping_after_a_drift_change() {
        // +200 ppm to 10 s (monotonic 10.002 s), then 0 ppm: at 20 s it reads 20.002 s. The
        // bound, synced at 0, keeps growing: e = 1 ms + 20 s x 200 ppm = 5 ms, so the node
        // reads [19.997 s, 20.007 s].
        let mut c = bounded(200, 1, 200);
        assert!(c.has_bound());
        assert!(!NodeClock::new(DriftRate::ZERO, LocalDur::ZERO).has_bound());
        c.set_drift(SimTime::from_ns(10 * NS), DriftRate::ZERO);
        let t = SimTime::from_ns(20 * NS);
        assert_eq!(c.mono(t).ns(), 20_002 * MS);
        assert_eq!(c.read(ClockKind::TtEarliest, t).ns(), 19_997 * MS);
        assert_eq!(c.read(ClockKind::TtLatest, t).ns(), 20_007 * MS);
        // A sync that leaves 3 ms of residual: the wall clock reads 20.003 s, e back to 1 ms.
        c.sync(t, LocalDur::from_ms(3));
        assert_eq!(c.wall(t).ns(), 20_003 * MS);
        assert_eq!(c.read(ClockKind::TtEarliest, t).ns(), 20_002 * MS);
        // A step or a sync moves every clock but the monotonic one.
        assert!(!ClockKind::Monotonic.follows_wall());
        assert!(ClockKind::Wall.follows_wall() && ClockKind::TtEarliest.follows_wall());
    }

    #[test]
    fn the_bounds_keep_the_fraction_a_drift_change_leaves() {
        // +200 ppm to 10 s + 1 ns: 10_000_000_001 x 1.0002 = 10_002_000_001.0002 ns, then
        // 0 ppm: at 20 s the monotonic clock is 20_002_000_000.0002 ns. With e = 1 ms exactly,
        // the node reads [floor, ceil] = [20_001_000_000, 20_003_000_001].
        let mut c = bounded(200, 1, 0);
        c.set_drift(SimTime::from_ns(10 * NS + 1), DriftRate::ZERO);
        let t = SimTime::from_ns(20 * NS);
        assert_eq!(c.read(ClockKind::TtEarliest, t).ns(), 20_001_000_000);
        assert_eq!(c.read(ClockKind::TtLatest, t).ns(), 20_003_000_001);
    }

    #[test]
    fn a_sync_resets_the_wall_clock_and_the_bound() {
        // +600 ppm with e = 0 + 200 ppm: 0.0004 t outside its interval; at 10 s, 4 ms. A sync
        // with no residual brings it back inside; 5 s later it is 2 ms out again, and the most
        // so far is still the 4 ms noted at the sync.
        let mut c = bounded(600, 0, 200);
        let ten = SimTime::from_ns(10 * NS);
        assert_eq!(c.outside_interval_ns(ten), 4 * MS);
        c.sync(ten, LocalDur::ZERO);
        assert_eq!(c.wall(ten).ns(), 10 * NS);
        assert_eq!(c.read(ClockKind::TtLatest, ten).ns(), 10 * NS);
        assert_eq!(c.outside_interval_ns(ten), 0);
        let later = SimTime::from_ns(15 * NS);
        assert_eq!(c.outside_interval_ns(later), 2 * MS);
        assert_eq!(c.max_outside_interval_ns(later), 4 * MS);
        // The monotonic clock was not stepped: it reads 1.0006 * 15 s.
        assert_eq!(c.mono(later).ns(), 15_009 * MS);
    }

    #[test]
    fn a_sync_leaves_the_monotonic_fraction_inside_the_interval_the_node_reads() {
        // 63.14277292687218 ppm is 63_142_773 ppt. At 3 s the monotonic clock is exactly
        // 3e9 + 3e9 * 63_142_773e-12 = 3_000_189_428.319 ns; a sync with no residual sets the
        // wall clock's whole nanoseconds to 3e9, so the wall clock is 0.319 ns ahead of true time
        // with e = 0. The node reads [floor, ceil] = [3e9, 3_000_000_001]: true time is inside.
        // Reporting the exact excess rounded up would say 1 ns outside.
        let drift = DriftRate::from_ppm(63.14277292687218).unwrap();
        assert_eq!(drift.ppt, 63_142_773);
        let mut c = NodeClock::new(drift, LocalDur::ZERO).with_bound(ErrorBound {
            base: LocalDur::ZERO,
            growth_ppt: DriftRate::from_ppm_int(200).ppt,
        });
        let three = SimTime::from_ns(3 * NS);
        c.sync(three, LocalDur::ZERO);
        assert_eq!(c.read(ClockKind::TtEarliest, three).ns(), 3 * NS);
        assert_eq!(c.read(ClockKind::TtLatest, three).ns(), 3 * NS + 1);
        assert_eq!(c.outside_interval_ns(three), 0);
        assert_eq!(c.max_outside_interval_ns(three), 0);
    }

    #[test]
    fn a_stalled_clock_s_earliest_bound_never_rises_and_its_latest_rises_with_e() {
        // Stalled at 1 s: wall stays 1e9; e = 1e6 + 0.0001 t keeps growing with true time, so
        // latest = ceil(1.001e9 + 0.0001 t) reads 1.002e9 as soon as 0.0001 t > 1e6 - 1, i.e.
        // t > 9_999_990_000 (the ceiling: 10 s exactly would be the bound without it).
        let mut c = bounded(0, 1, 100);
        c.stall(SimTime::from_ns(NS));
        let d = LocalTime::from_ns(1_002 * MS);
        assert_eq!(
            c.reaches(ClockKind::TtLatest, d, SimTime::from_ns(NS)),
            SimTime::from_ns(9_999_990_001)
        );
        assert_eq!(
            c.reaches(ClockKind::TtEarliest, d, SimTime::from_ns(NS)),
            SimTime::NEVER
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// `reaches` on either bound is the first nanosecond whose reading is at the deadline
        /// or past it, for any drift, error bound, step and deadline.
        #[test]
        fn reaching_a_bound_is_its_first_instant(
            drift_ppm in -5_000i64..5_000,
            base_us in 0i64..5_000,
            growth_ppm in 0i64..2_000,
            step_us in -50_000i64..50_000,
            from_ms in 0i64..20_000,
            ahead_us in -1_000i64..30_000_000,
            latest in any::<bool>(),
        ) {
            let mut c = NodeClock::new(DriftRate::from_ppm_int(drift_ppm), LocalDur::ZERO)
                .with_bound(ErrorBound {
                    base: LocalDur::from_ns(base_us * 1_000),
                    growth_ppt: DriftRate::from_ppm_int(growth_ppm).ppt,
                });
            let from = SimTime::from_ns(from_ms * MS);
            c.step_wall(from, LocalDur::from_ns(step_us * 1_000));
            let kind = if latest { ClockKind::TtLatest } else { ClockKind::TtEarliest };
            let deadline = c.read(kind, from) + LocalDur::from_ns(ahead_us * 1_000);
            let t = c.reaches(kind, deadline, from);
            prop_assert!(t < SimTime::NEVER);
            prop_assert!(c.read(kind, t) >= deadline);
            if t > from {
                prop_assert!(c.read(kind, SimTime::from_ns(t.ns() - 1)) < deadline);
            }
        }
    }
}
