//! The Poisson streams' draws (each arrival's gap and key), made where the run is or on a
//! helper thread ahead of it.
//!
//! A stream's draws depend on nothing but its own random stream: its gaps' distribution, its
//! ChaCha stream and the key count are fixed when the run is built. So a long run can have them
//! made on another core while it simulates: a helper thread owns every stream's generator and
//! fills chunks of [`CHUNK`] draws, at most [`DEPTH`] ready a stream, which the run reads in
//! order, waking the helper when a stream is down to [`LOW`] chunks ready. Each stream yields
//! exactly the draws it yields on the run's own thread, in the same order, so the outputs are
//! the same byte for byte; only where the arithmetic runs differs. On the canonical hour the
//! draws were about a tenth of the run's time.
//!
//! The helper is used only for a run with at least [`HELPER_FROM`] arrivals expected, on a
//! machine with a second core, and not on a thread of a rayon pool (a sweep's or an
//! exploration's threads already keep every core busy); `LEASESIM_HELPER_THREAD`
//! ([`HELPER_THREAD_VAR`]) set to `0` or `1` decides instead. A helper that cannot be started
//! leaves the run to draw its own. Memory stays bounded: the helper waits whenever every stream
//! has [`DEPTH`] chunks ready (so at most DEPTH + 1 chunks of 16 KB a stream exist, 24 KB with
//! several keys, and the one being filled), and stops when the run is dropped.

use crate::dist::Sampler;
use crate::rng::Rng;
use crate::strategy::Key;
use crate::time::Dur;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Draws a chunk holds.
const CHUNK: usize = 2048;
/// Chunks a stream has ready at most.
const DEPTH: usize = 4;
/// A stream left with this many chunks ready or fewer wakes the helper, which then fills every
/// stream up to [`DEPTH`]: it is woken once every few chunks, not at each.
const LOW: usize = 1;
/// The fewest arrivals a run is expected to have for its draws to be made on a helper thread:
/// below it, the thread's start costs more than it saves.
pub(super) const HELPER_FROM: f64 = 200_000.0;

/// Where a run's Poisson streams are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DrawsOn {
    /// On a helper thread if the run is long enough and a core is free for it.
    Auto,
    /// On the run's own thread.
    RunThread,
    /// On a helper thread, whatever the run.
    Helper,
}

#[cfg(test)]
thread_local! {
    /// Where the runs built on this thread draw their streams (tests pin one or the other).
    pub(super) static DRAWS_ON: std::cell::Cell<DrawsOn> = const { std::cell::Cell::new(DrawsOn::Auto) };
    /// How many helpers were started on this thread.
    static STARTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl DrawsOn {
    /// Where a run built on this thread draws its streams: as [`HELPER_THREAD_VAR`] says (`0`
    /// on the run's thread, `1` on a helper), else [`DrawsOn::Auto`]; in tests, what the test
    /// set first.
    pub(super) fn here() -> DrawsOn {
        #[cfg(test)]
        if DRAWS_ON.get() != DrawsOn::Auto {
            return DRAWS_ON.get();
        }
        DrawsOn::from_var(std::env::var_os(HELPER_THREAD_VAR).as_deref())
    }

    /// Where [`HELPER_THREAD_VAR`] set to `value` says runs draw their streams.
    fn from_var(value: Option<&std::ffi::OsStr>) -> DrawsOn {
        match value {
            Some(v) if v == "0" => DrawsOn::RunThread,
            Some(v) if v == "1" => DrawsOn::Helper,
            _ => DrawsOn::Auto,
        }
    }

    /// Whether a run with `expected` arrivals has its draws made on a helper thread.
    pub(super) fn helper(self, expected: f64) -> bool {
        match self {
            DrawsOn::RunThread => false,
            DrawsOn::Helper => true,
            DrawsOn::Auto => expected >= HELPER_FROM && core_free(),
        }
    }
}

/// The environment variable that decides where runs draw their Poisson streams: `0` keeps
/// every run on its own thread, `1` draws every run's on a helper thread; unset (or anything
/// else), a long run's are drawn on a helper when a core is free for it.
pub const HELPER_THREAD_VAR: &str = "LEASESIM_HELPER_THREAD";

/// A second core, and this thread not one of a rayon pool's (whose others use the cores).
fn core_free() -> bool {
    #[cfg(feature = "parallel")]
    if rayon::current_thread_index().is_some() {
        return false;
    }
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// A stream's generator: its gaps' distribution and its random stream, drawing each gap and
/// key one arrival ahead (in the stream's own order, so every draw is the one it would be), so
/// that the draw's arithmetic is done by the time the arrival is placed among the others.
#[derive(Clone)]
pub(super) struct Drawer {
    pub(super) sampler: Sampler,
    pub(super) rng: Rng,
    pub(super) ahead: Option<(Dur, Key)>,
}

impl Drawer {
    /// A generator of gaps from `sampler` over `rng`.
    pub(super) fn new(sampler: Sampler, rng: Rng) -> Drawer {
        Drawer {
            sampler,
            rng,
            ahead: None,
        }
    }

    /// The next gap and key: the one drawn ahead, and the one after it drawn now.
    #[inline(always)]
    pub(super) fn next(&mut self, keys: u32) -> (Dur, Key) {
        let next = match self.ahead {
            Some(p) => p,
            None => self.draw(keys),
        };
        self.ahead = Some(self.draw(keys));
        next
    }

    #[inline(always)]
    fn draw(&mut self, keys: u32) -> (Dur, Key) {
        let gap = self.sampler.sample(&mut self.rng);
        (gap, super::workload::draw_key(&mut self.rng, keys))
    }
}

/// A node's Poisson stream of reads or of writes.
// The drawer kept inline (its ChaCha state is most of it): a run has at most two streams a
// node, and a box would put an indirection on every arrival's draw.
#[allow(clippy::large_enum_variant)]
pub(super) enum Stream {
    /// Drawn on the run's thread.
    Here(Drawer),
    /// Drawn by the helper: the stream's index there, and the chunk being read.
    Fed {
        index: usize,
        chunk: Chunk,
        read: usize,
    },
}

/// Draws of a stream, in order: the gaps, and the keys if there is more than one (one key is
/// never drawn: it is 0).
#[derive(Default)]
pub(super) struct Chunk {
    gaps: Vec<Dur>,
    keys: Vec<Key>,
}

impl Chunk {
    /// `drawer`'s next [`CHUNK`] draws of keys among `keys`, in place of what this held. (The
    /// helper draws each when it is wanted, not one ahead: the drawer has nothing drawn ahead.)
    fn fill(&mut self, drawer: &mut Drawer, keys: u32) {
        debug_assert!(
            drawer.ahead.is_none(),
            "a fed stream's drawer draws none ahead"
        );
        self.gaps.clear();
        self.keys.clear();
        if keys > 1 {
            for _ in 0..CHUNK {
                let (gap, key) = drawer.draw(keys);
                self.gaps.push(gap);
                self.keys.push(key);
            }
        } else {
            self.gaps.extend((0..CHUNK).map(|_| drawer.draw(keys).0));
        }
    }
}

impl Stream {
    /// The stream's next gap and key (`helper` is the run's helper, for a fed stream).
    #[inline(always)]
    pub(super) fn next(&mut self, keys: u32, helper: Option<&Helper>) -> (Dur, Key) {
        match self {
            Stream::Here(drawer) => drawer.next(keys),
            Stream::Fed { index, chunk, read } => {
                if *read == chunk.gaps.len() {
                    let helper = helper.expect("a fed stream's run has its helper");
                    helper.swap(*index, chunk);
                    *read = 0;
                }
                let gap = chunk.gaps[*read];
                let key = if keys > 1 { chunk.keys[*read] } else { 0 };
                *read += 1;
                (gap, key)
            }
        }
    }
}

/// What the run and its helper share, under one lock taken once a chunk.
struct State {
    /// Each stream's chunks ready, oldest first.
    ready: Vec<VecDeque<Chunk>>,
    /// Chunks read out, for the helper to fill again.
    spare: Vec<Chunk>,
    /// The helper waits to be woken.
    helper_idle: bool,
    /// The run waits for a chunk.
    run_waiting: bool,
    /// The run is over: the helper stops.
    stop: bool,
    /// The helper's thread has ended (only ever by a panic while the run goes on).
    gone: bool,
    /// How many times the run has woken the helper.
    #[cfg(test)]
    wakes: u32,
}

struct Shared {
    state: Mutex<State>,
    /// The helper waits on it for a stream to need a chunk, or for the stop.
    helper_wake: Condvar,
    /// The run waits on it for a stream's chunk.
    run_wake: Condvar,
}

impl Shared {
    /// The state, locked. A panic under the lock (the run's, finding the helper gone) leaves
    /// the state whole: the lock is taken again as it was left.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits on `wake` with `state` locked.
    fn wait<'a>(&self, wake: &Condvar, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        wake.wait(state).unwrap_or_else(PoisonError::into_inner)
    }
}

/// The helper thread that draws a run's streams, stopped and joined when dropped.
pub(super) struct Helper {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Helper {
    /// Starts the helper with `drawers` (stream `i` is `drawers[i]`), each drawing keys among
    /// `keys`; `None` if its thread cannot be started.
    pub(super) fn start(drawers: Vec<Drawer>, keys: u32) -> Option<Helper> {
        #[cfg(test)]
        STARTED.set(STARTED.get() + 1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                ready: drawers.iter().map(|_| VecDeque::new()).collect(),
                spare: Vec::new(),
                helper_idle: false,
                run_waiting: false,
                stop: false,
                gone: false,
                #[cfg(test)]
                wakes: 0,
            }),
            helper_wake: Condvar::new(),
            run_wake: Condvar::new(),
        });
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("leasesim-draws".into())
            .spawn(move || draw_ahead(&theirs, drawers, keys))
            .ok()?;
        Some(Helper {
            shared,
            thread: Some(thread),
        })
    }

    /// Hands back stream `index`'s `chunk`, read to its end, and puts its next one in its
    /// place, waiting for the helper to fill it if need be.
    #[cold]
    #[inline(never)]
    fn swap(&self, index: usize, chunk: &mut Chunk) {
        let mut state = self.shared.lock();
        let next = loop {
            if state.ready[index].len() <= LOW && state.helper_idle {
                state.helper_idle = false;
                self.shared.helper_wake.notify_one();
                #[cfg(test)]
                {
                    state.wakes += 1;
                }
            }
            if let Some(next) = state.ready[index].pop_front() {
                break next;
            }
            assert!(!state.gone, "the streams' helper thread ended early");
            state.run_waiting = true;
            state = self.shared.wait(&self.shared.run_wake, state);
            state.run_waiting = false;
        };
        state.spare.push(std::mem::replace(chunk, next));
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.helper_wake.notify_one();
        if let Some(thread) = self.thread.take() {
            // A panic on the helper was reported where it happened; the run's result stands
            // or has already failed.
            let _ = thread.join();
        }
    }
}

/// A value on cache lines of its own (two lines: adjacent lines are fetched in pairs).
#[repr(align(128))]
struct Lines<T>(T);

/// Tells the run when the helper's thread ends, however it ends.
struct Gone<'a>(&'a Shared);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.lock().gone = true;
        self.0.run_wake.notify_all();
    }
}

/// The helper's loop: fills a chunk for the stream with the fewest ready while one has fewer
/// than [`DEPTH`], then waits to be woken, until the run stops it.
fn draw_ahead(shared: &Shared, drawers: Vec<Drawer>, keys: u32) {
    let _gone = Gone(shared);
    // Each generator on cache lines of its own, allocated here: the run's thread writes the
    // memory around the vector it came in, and a generator that shared a line with it (its
    // state is written at every draw) drew at a third of its speed.
    let mut drawers: Vec<Lines<Drawer>> = {
        let mut own = Vec::with_capacity(drawers.len());
        own.extend(drawers.into_iter().map(Lines));
        own
    };
    loop {
        let (index, mut chunk) = {
            let mut state = shared.lock();
            loop {
                if state.stop {
                    return;
                }
                // The stream with the fewest ready (the first of them): the one the run may
                // be waiting for.
                let (index, ready) = (state.ready.iter().map(VecDeque::len).enumerate())
                    .min_by_key(|&(_, ready)| ready)
                    .expect("a helper has streams");
                if ready < DEPTH {
                    break (index, state.spare.pop().unwrap_or_default());
                }
                state.helper_idle = true;
                state = shared.wait(&shared.helper_wake, state);
                state.helper_idle = false;
            }
        };
        chunk.fill(&mut drawers[index].0, keys);
        let mut state = shared.lock();
        state.ready[index].push_back(chunk);
        if state.run_waiting {
            shared.run_wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Component};
    use crate::scenario::DurationDist;

    fn drawer(seed: u64, index: u64) -> Drawer {
        let exp = DurationDist::Exponential {
            mean: Dur::from_ms(1),
        };
        Drawer::new(
            Sampler::new(&exp).expect("a mean"),
            stream(seed, Component::Reads, index),
        )
    }

    /// The variable's `0` and `1` decide; anything else leaves it to the run's length. A test's
    /// own choice comes before the variable. Forced either way, the length does not count;
    /// left to it, a run draws on a helper from HELPER_FROM arrivals, if a core is free.
    #[test]
    fn where_a_run_draws_its_streams() {
        use std::ffi::OsStr;
        assert_eq!(DrawsOn::from_var(None), DrawsOn::Auto);
        assert_eq!(DrawsOn::from_var(Some(OsStr::new("0"))), DrawsOn::RunThread);
        assert_eq!(DrawsOn::from_var(Some(OsStr::new("1"))), DrawsOn::Helper);
        for other in ["", "2", "01", "yes"] {
            assert_eq!(DrawsOn::from_var(Some(OsStr::new(other))), DrawsOn::Auto);
        }
        for on in [DrawsOn::RunThread, DrawsOn::Helper] {
            DRAWS_ON.set(on);
            assert_eq!(DrawsOn::here(), on);
        }
        DRAWS_ON.set(DrawsOn::Auto);
        assert!(!DrawsOn::RunThread.helper(1e12));
        assert!(DrawsOn::Helper.helper(0.0));
        assert!(!DrawsOn::Auto.helper(HELPER_FROM - 1.0));
        assert_eq!(DrawsOn::Auto.helper(HELPER_FROM), core_free());
    }

    /// A second core is free on a machine that has one, but not on a thread of a rayon pool
    /// (whose other threads use the cores).
    #[test]
    fn a_core_is_free_outside_a_pool_with_cores_to_spare() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(core_free(), cores > 1);
        #[cfg(feature = "parallel")]
        {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a pool");
            assert!(!pool.install(core_free));
        }
    }

    /// Dropped, a helper stops its thread and waits for it to end, waiting or drawing.
    #[test]
    fn a_dropped_helper_ends_its_thread() {
        for streams in [1, 3] {
            let helper =
                Helper::start((0..streams).map(|i| drawer(3, i)).collect(), 1).expect("a thread");
            let shared = Arc::clone(&helper.shared);
            drop(helper);
            assert!(shared.lock().gone, "{streams} streams");
        }
    }

    /// A helper fills DEPTH chunks of a stream and waits; the run wakes it only when a stream
    /// is down to LOW chunks ready: from a stream with its DEPTH chunks ready, the first
    /// DEPTH - LOW chunks read wake nothing, and the next one does (woken at every chunk, the
    /// helper would cost a lock and a wake-up each time; never waiting, it would fill chunks
    /// without bound).
    #[test]
    fn the_helper_is_woken_only_when_a_stream_runs_low() {
        let helper = Helper::start(vec![drawer(5, 0)], 1).expect("a thread");
        let full_and_idle = || {
            let state = helper.shared.lock();
            state.helper_idle && state.ready[0].len() == DEPTH
        };
        // Left alone, the helper fills DEPTH chunks, no more, and waits (within 10 s).
        let mut waited_ms = 0;
        while !full_and_idle() {
            assert!(
                waited_ms < 10_000,
                "the helper never waits with DEPTH ready"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
            waited_ms += 1;
        }
        let mut stream = Stream::Fed {
            index: 0,
            chunk: Chunk::default(),
            read: 0,
        };
        let mut read_a_chunk = || {
            for _ in 0..CHUNK {
                stream.next(1, Some(&helper));
            }
        };
        for _ in 0..DEPTH - LOW {
            read_a_chunk();
        }
        assert_eq!(helper.shared.lock().wakes, 0);
        read_a_chunk();
        assert_eq!(helper.shared.lock().wakes, 1);
    }

    /// Drawn one ahead, a stream gives the gaps and keys it gives drawn one at a time, in order:
    /// gap, key, gap, key from its own random stream (five keys, so that each key is a draw).
    #[test]
    fn a_stream_drawn_ahead_gives_the_draws_of_one_at_a_time() {
        let mut ahead = drawer(7, 2);
        let exp = DurationDist::Exponential {
            mean: Dur::from_ms(1),
        };
        let (sampler, mut rng) = (
            Sampler::new(&exp).expect("a mean"),
            stream(7, Component::Reads, 2),
        );
        for _ in 0..100 {
            let gap = sampler.sample(&mut rng);
            let key = crate::engine::workload::draw_key(&mut rng, 5);
            assert_eq!(ahead.next(5), (gap, key));
        }
    }

    /// Three streams fed by the helper, read unevenly (stream 0 three times as often as 2, and
    /// stream 1 only after the others have run several chunks ahead), give each stream's own
    /// draws in order: those of the same generators drawn here. Well past DEPTH chunks of each,
    /// so that the helper both runs ahead and waits, and the run both finds chunks ready and
    /// waits for one.
    #[test]
    fn streams_fed_by_the_helper_give_the_draws_made_here() {
        // One key (never drawn) and three.
        for keys in [1, 3] {
            let mut here: Vec<Stream> = (0..3).map(|i| Stream::Here(drawer(11, i))).collect();
            let helper =
                Helper::start((0..3).map(|i| drawer(11, i)).collect(), keys).expect("a thread");
            let mut fed: Vec<Stream> = (0..3)
                .map(|index| Stream::Fed {
                    index,
                    chunk: Chunk::default(),
                    read: 0,
                })
                .collect();
            let draws = 3 * DEPTH * CHUNK;
            let mut check = |i: usize| {
                let want = here[i].next(keys, None);
                assert_eq!(
                    fed[i].next(keys, Some(&helper)),
                    want,
                    "stream {i}, {keys} keys"
                );
            };
            for step in 0..draws {
                check(0);
                check(0);
                check(0);
                check(2);
                if step >= draws / 2 {
                    check(1);
                }
            }
        }
    }

    /// A run of many arrivals (three contenders reading and writing three keys, paused now and
    /// then) has the same outcome with its streams drawn by the helper as drawn on its own
    /// thread: every count, gap and figure of the summary, and the events in flight (which
    /// count the arrivals pending).
    #[test]
    fn a_run_drawn_by_the_helper_has_the_outcome_of_one_drawn_here() {
        let s = crate::Scenario::from_ron(
            r#"Scenario(
                seed: 5,
                duration: "6s",
                lease: (duration: "1s", renew_every: "300ms", retry_every: "100ms"),
                strategy: TwoSided(holder_margin: "10ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender, drift_ppm: -50.0),
                    (name: "b", role: Contender, drift_ppm: 50.0),
                    (name: "c", role: Contender),
                ],
                network: (delay: Uniform(min: "1ms", max: "3ms")),
                workload: (reads_per_second: 3000.0, writes_per_second: 300.0, keys: 3),
                random_faults: [
                    Pauses(nodes: ["a", "b", "c"], per_minute: 60.0,
                           duration: Exponential(mean: "50ms"), kind: Gc),
                ],
            )"#,
        )
        .expect("a scenario");
        // Each run, and the helpers started for it (one, or none).
        let run = |on: DrawsOn| {
            DRAWS_ON.set(on);
            let started = STARTED.get();
            let strategy = crate::strategy::from_spec(&s.strategy).expect("built in");
            let outcome = crate::run_with("s", &s, strategy, None).expect("it runs");
            DRAWS_ON.set(DrawsOn::Auto);
            (outcome, STARTED.get() - started)
        };
        let ((here, none), (fed, one)) = (run(DrawsOn::RunThread), run(DrawsOn::Helper));
        assert_eq!((none, one), (0, 1));
        // 3 nodes x 3000 reads a second x 6 s: about 54,000 reads, over 8 chunks of each
        // node's read stream (8 x 2048 x 3 = 49,152), twice DEPTH.
        let arrived = here.summary.requests.reads_arrived;
        assert!(
            arrived > 2 * DEPTH as u64 * CHUNK as u64 * 3,
            "{arrived} reads"
        );
        assert_eq!(here.summary, fed.summary);
        assert_eq!(here.mean_in_flight, fed.mean_in_flight);
    }
}
