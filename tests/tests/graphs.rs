//! CUDA graphs of cuda-mem work (`Graph::capture`, `Graph::launch`): a
//! graph of host copies through pinned memory, fills (memset, small-kernel
//! and large-kernel plans), device copies and a typed kernel, replayed with
//! new inputs written from the host between launches, poison queued on
//! another stream before each, and a fill value changed without recapture;
//! errors inside a capture (memory the graph does not hold, a stream of
//! another context, host access, a host-synchronous driver call), each
//! leaving the stream usable; launches ordered against other streams and
//! the buffers' drops; pool memory the graph allocates itself (a temporary
//! freed inside the graph, an output kept until the next launch); launches
//! with no context or another one current. The borrow rules (no drop, no
//! host access while a graph holds a buffer) are `compile_fail` examples of
//! `Graph`.

use cuda_mem::prelude::*;

use cuda_mem::{
    CudaContext, DeviceBuffer, Graph, LaunchConfig, MemPool, Module, PinnedBuffer, PitchedBuffer,
    PoolBuffer,
};
use cuda_mem_launch_kernels::{
    churn, churned, pitched_add, transform, transform_items, Item, Params,
};
use cuda_mem_tests::{env_count, expect_err, gpu, with_current, Current, Rng};

static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

/// An element above the small-kernel pattern size (256 bytes): its fills
/// read the value from memory, which a graph must keep.
type Big = [u32; 73];

fn item(rng: &mut Rng) -> Item {
    Item {
        key: rng.value(),
        weight: rng.below(1 << 20) as f32 / 64.0,
        id: rng.value(),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_captured_copy_fill_and_kernel_replay_with_new_inputs() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_replay");
    // 1,000 launches; fewer under compute-sanitizer, which is slow.
    let default = if cuda_mem_tests::under_sanitizer() {
        50
    } else {
        1000
    };
    let launches = env_count("CUDA_MEM_GRAPH_LAUNCHES", default);
    let n = (1 + rng.below(20_000)) | 1;
    let k = rng.below(n + 1);
    let m = 1 + rng.below(3000);
    let (s, other) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut input = PinnedBuffer::<Item>::new(&ctx, n).unwrap();
    let mut dev_in = DeviceBuffer::<Item>::new(&ctx, n).unwrap();
    let mut dev_out = DeviceBuffer::<Item>::new(&ctx, n).unwrap();
    let mut output = PinnedBuffer::<Item>::new(&ctx, n).unwrap();
    let mut big = DeviceBuffer::<Big>::new(&ctx, m).unwrap();
    let mut big_out = PinnedBuffer::<Big>::new(&ctx, m).unwrap();
    let mut word = DeviceBuffer::<u32>::new(&ctx, m).unwrap();
    let params = Params {
        add: rng.value(),
        scale: (1 + rng.below(1000)) as f32 / 8.0,
    };
    let fill_item = item(&mut rng);
    let big_value: Big = std::array::from_fn(|_| rng.value());
    let word_value: u32 = rng.value();
    let config = LaunchConfig::for_num_elems(k.max(1) as u32);
    transform_items.check(&KERNELS, &ctx).unwrap();
    let mut word_param = None;
    let buffers = (
        &mut input,
        &mut dev_in,
        &mut dev_out,
        &mut output,
        &mut big,
        &mut big_out,
        &mut word,
    );
    let mut graph = Graph::capture(
        &s,
        buffers,
        |s, (input, mut dev_in, mut dev_out, mut output, mut big, mut big_out, mut word)| {
            dev_in.copy_from_host_async(&*input, s)?;
            dev_out.fill_async(fill_item, s)?;
            transform_items.launch(
                &KERNELS,
                s,
                config,
                (dev_out.slice_mut(..k)?, dev_in.slice(..k)?, params),
            )?;
            output.copy_from_async(&dev_out, s)?;
            big.fill_async(big_value, s)?;
            big_out.copy_from_async(&big, s)?;
            word_param = Some(s.fill_param(&mut word, word_value)?);
            big_out
                .slice_mut(..1)?
                .copy_from_async(&big.slice(..1)?, s)?;
            Ok(())
        },
    )
    .unwrap();
    let word_param = word_param.unwrap();
    let mut word_value = word_value;
    let mut checked = 0usize;
    for launch in 0..launches {
        let data: Vec<Item> = (0..n).map(|_| item(&mut rng)).collect();
        {
            let (mut input, _, mut dev_out, mut output, mut big, mut big_out, mut word) =
                graph.buffers();
            // Host writes between launches: they wait for the last launch.
            input.as_mut_slice().unwrap().copy_from_slice(&data);
            output.as_mut_slice().unwrap().fill(item(&mut rng));
            big_out.as_mut_slice().unwrap().fill([0xdead_beef; 73]);
            // Poison queued on another stream: the launch must come after it.
            dev_out.fill_async(item(&mut rng), &other).unwrap();
            big.memset_async(0xab, &other).unwrap();
            word.memset_async(0xcd, &other).unwrap();
        }
        // A new fill value without a new capture (every other launch).
        if launch % 2 == 1 {
            word_value = rng.value();
            graph.set_fill(&word_param, word_value).unwrap();
        }
        let stream = if launch % 3 == 2 { &other } else { &s };
        graph.launch(stream).unwrap();
        let (_, _, _, output, _, big_out, word) = graph.buffers();
        let out = output.as_slice().unwrap();
        for (i, (got, x)) in out.iter().zip(&data).enumerate() {
            let want = if i < k {
                transform(*x, params)
            } else {
                fill_item
            };
            assert_eq!(*got, want, "launch {launch}: element {i} of {n} (k {k})");
        }
        let big_got = big_out.as_slice().unwrap();
        assert!(
            big_got.iter().all(|b| *b == big_value),
            "launch {launch}: the large fill"
        );
        let words = word.to_vec().unwrap();
        assert!(
            words.iter().all(|&w| w == word_value),
            "launch {launch}: the updated fill value"
        );
        checked += out.len() + big_got.len() + words.len();
    }
    drop(graph);
    // The buffers are back, ordered after the last launch.
    assert!(word.to_vec().unwrap().iter().all(|&w| w == word_value));
    dev_out.fill_async(fill_item, &other).unwrap();
    assert!(dev_out.to_vec().unwrap().iter().all(|x| *x == fill_item));
    println!(
        "{launches} launches of a graph of 8 operations (n {n}, kernel over {k}, {m} large \
         elements): {checked} elements checked"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_graph_that_only_reads_a_buffer_leaves_it_readable() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_shared");
    let (w, h) = (1 + rng.below(700), 1 + rng.below(300));
    let data: Vec<f32> = (0..w * h).map(|_| rng.below(1 << 16) as f32).collect();
    let add = (1 + rng.below(100)) as f32;
    let src = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
    let mut dst = PitchedBuffer::<f32>::new(&ctx, w, h).unwrap();
    dst.fill(f32::NAN).unwrap();
    let s = ctx.new_stream().unwrap();
    let config = LaunchConfig {
        grid_dim: (w.div_ceil(32) as u32, h.div_ceil(8) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let mut graph = Graph::capture(&s, (&src, &mut dst), |s, (src, mut dst)| {
        pitched_add.launch(&KERNELS, s, config, (&mut dst, src, add))
    })
    .unwrap();
    let launches = 1 + rng.below(20);
    for _ in 0..launches {
        graph.launch(&s).unwrap();
    }
    // Shared: the host may read the source while the graph lives.
    assert_eq!(src.to_vec().unwrap(), data);
    drop(graph);
    let got = dst.to_vec().unwrap();
    for (i, (g, x)) in got.iter().zip(&data).enumerate() {
        assert_eq!(g.to_bits(), (x + add).to_bits(), "element {i} of {w}x{h}");
    }
    println!("a pitched kernel over {w}x{h} replayed {launches} times; its source stayed readable");
}

#[test]
#[ignore = "needs a CUDA device"]
fn errors_inside_a_capture_end_it_and_leave_the_stream_usable() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_errors");
    let n = 1 + rng.below(10_000);
    let s = ctx.new_stream().unwrap();
    let mut a = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
    let mut outside = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
    let foreign_ctx = CudaContext::new_non_primary(0, 0).expect("a second (non-primary) context");
    let foreign = foreign_ctx.new_stream().unwrap();
    let v: u32 = rng.value();

    // Each failure is an Err naming the problem, and the stream is usable
    // after it: a capture that records `v` into `a` replays it.
    let refused =
        |result: cuda_mem::Result<()>, needle: &str, what: &str, a: &mut DeviceBuffer<u32>| {
            expect_err(result, &[needle], what);
            let w = v ^ 0x5a5a_5a5a;
            a.fill_async(w, &s).unwrap();
            assert!(a.to_vec().unwrap().iter().all(|&x| x == w), "{what}");
            let mut graph =
                Graph::capture(&s, (&mut *a,), |s, (mut a,)| a.fill_async(v, s)).unwrap();
            graph.launch(&s).unwrap();
            drop(graph);
            assert!(a.to_vec().unwrap().iter().all(|&x| x == v), "after {what}");
        };

    let unlisted = Graph::capture(&s, (&mut a,), |s, (mut a,)| {
        a.fill_async(1, s)?;
        outside.fill_async(2, s)
    });
    refused(
        unlisted.map(drop),
        "buffers tuple",
        "a buffer not given to the capture",
        &mut a,
    );
    assert!(outside.to_vec().unwrap().iter().all(|&x| x == 0));

    let other_context = Graph::capture(&s, (&mut a,), |_, (mut a,)| a.fill_async(3, &foreign));
    refused(
        other_context.map(drop),
        "context mismatch",
        "a stream of another context",
        &mut a,
    );

    let host_read = Graph::capture(&s, (&mut a,), |s, (mut a,)| {
        a.fill_async(4, s)?;
        a.to_vec().map(drop)
    });
    refused(
        host_read.map(drop),
        "being recorded",
        "host access inside the capture",
        &mut a,
    );

    let elsewhere = Graph::capture(&s, (&mut a,), |_, (mut a,)| {
        let other = ctx.new_stream().unwrap();
        a.fill_async(5, &other)
    });
    refused(
        elsewhere.map(drop),
        "being recorded",
        "another stream inside the capture",
        &mut a,
    );

    let nested = Graph::capture(&s, (&mut a,), |s, (mut a,)| {
        a.fill_async(6, s)?;
        Graph::capture(s, (), |_, ()| Ok(())).map(drop)
    });
    refused(
        nested.map(drop),
        "already recording",
        "a capture inside another",
        &mut a,
    );

    let mut b = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
    let mut inner = Graph::capture(&s, (&mut b,), |rec, (mut b,)| b.fill_async(9, rec)).unwrap();
    let launched_inside = Graph::capture(&s, (&mut a,), |rec, (mut a,)| {
        a.fill_async(8, rec)?;
        inner.launch(rec)
    });
    refused(
        launched_inside.map(drop),
        "launched outside captures",
        "a graph launched inside a capture",
        &mut a,
    );
    drop(inner);
    assert!(
        b.to_vec().unwrap().iter().all(|&x| x == 0),
        "the inner graph ran"
    );

    if !cuda_mem_tests::skip_driver_errors_under_sanitizer(
        "errors_inside_a_capture_end_it_and_leave_the_stream_usable",
        "a host-synchronous call invalidates the capture in the driver",
    ) {
        let synchronous = Graph::capture(&s, (&mut a,), |s, (mut a,)| {
            a.fill_async(7, s)?;
            let _ = s.synchronize(); // illegal while capturing: breaks the capture
            Ok(())
        });
        refused(
            synchronous.map(drop),
            "cuStreamEndCapture",
            "stream.synchronize() inside",
            &mut a,
        );
    }
    // The legacy default stream cannot capture.
    expect_err(
        Graph::capture(&ctx.default_stream(), (&mut a,), |s, (mut a,)| {
            a.fill_async(1, s)
        }),
        &["legacy default stream"],
        "capture on the legacy default stream",
    );
    println!("errors inside captures: each an Err, the stream usable after every one");
}

#[test]
#[ignore = "needs a CUDA device"]
fn launches_wait_for_other_streams_and_buffers_wait_for_launches() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_order");
    // Large enough that a missing wait would show.
    let n = (1 << 22) + rng.below(1 << 20);
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut a = DeviceBuffer::<u64>::zeroed(&ctx, n).unwrap();
    let mut b = DeviceBuffer::<u64>::zeroed(&ctx, n).unwrap();
    let rounds = 1 + rng.below(30);
    let values: Vec<u64> = (0..rounds).map(|_| rng.value()).collect();
    let mut graph = Graph::capture(&s1, (&mut a, &mut b), |s, (a, mut b)| {
        b.copy_from_async(&a, s)
    })
    .unwrap();
    for (round, &x) in values.iter().enumerate() {
        let (mut a, _) = graph.buffers();
        a.fill_async(x, &s2).unwrap(); // on s2: the launch on s1 waits for it
        graph.launch(&s1).unwrap();
        let (_, b) = graph.buffers();
        assert!(
            b.to_vec().unwrap().iter().all(|&v| v == x),
            "round {round}: the copy did not see the fill of this round"
        );
    }
    let last = *values.last().unwrap();
    graph.launch(&s2).unwrap();
    drop(graph);
    drop(a); // waits for the launch before freeing
    assert!(b.to_vec().unwrap().iter().all(|&v| v == last));
    println!("{rounds} rounds over {n} words: every launch saw the fill queued before it");
}

#[test]
#[ignore = "needs a CUDA device"]
fn relaunches_on_one_stream_stay_ordered_against_every_other_use() {
    // Relaunches on the stream of the previous launch, with nothing else
    // on the memory in between, skip re-ordering the buffers: every other
    // use (another stream, the host, a launch elsewhere) must still wait.
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_relaunch");
    let n = (1 << 20) + rng.below(1 << 18);
    let rounds = 200 + rng.below(200) as u32;
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let start: Vec<u32> = rng.values(n);
    let mut x = DeviceBuffer::from_slice(&ctx, &start).unwrap();
    let seed: Vec<u32> = rng.values(n);
    let y = DeviceBuffer::from_slice(&ctx, &seed).unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);
    churn.check(&KERNELS, &ctx).unwrap();
    let mut graph = Graph::capture(&s1, (&mut x,), |rec, (mut x,)| {
        churn.launch(&KERNELS, rec, config, (&mut x, rounds))
    })
    .unwrap();
    let mut want = start;
    let mut launches = 0;
    for step in 0..6 {
        let burst = 1 + rng.below(4);
        for _ in 0..burst {
            graph.launch(&s1).unwrap();
        }
        launches += burst;
        for w in want.iter_mut() {
            *w = (0..burst).fold(*w, |v, _| churned(v, rounds));
        }
        match step % 3 {
            // A launch on another stream waits for the burst on s1.
            0 => {
                graph.launch(&s2).unwrap();
                launches += 1;
                want.iter_mut().for_each(|w| *w = churned(*w, rounds));
            }
            // Work on the held buffer on another stream waits too.
            1 => {
                let (mut x,) = graph.buffers();
                x.copy_from_async(&y, &s2).unwrap();
                want.copy_from_slice(&seed);
            }
            // The host read waits for every launch.
            _ => {
                let (x,) = graph.buffers();
                let got = x.to_vec().unwrap();
                for i in 0..n {
                    assert_eq!(got[i], want[i], "step {step}: element {i} of {n}");
                }
            }
        }
    }
    drop(graph);
    let got = x.to_vec().unwrap();
    for i in 0..n {
        assert_eq!(got[i], want[i], "after the graph: element {i} of {n}");
    }
    println!("{launches} launches of {rounds} rounds over {n} words, each ordered");
}

#[test]
#[ignore = "needs a CUDA device"]
fn pool_memory_inside_a_graph_temporaries_and_outputs() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_pool");
    let n = (1 + rng.below(50_000)) | 1;
    let k = rng.below(n + 1);
    let rounds = 1 + rng.below(8) as u32;
    let marker: u32 = rng.value();
    let (s, other) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut input = PinnedBuffer::<u32>::new(&ctx, n).unwrap();
    let mut result = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);
    churn.check(&KERNELS, &ctx).unwrap();
    let (mut out, mut empty) = (None, None);
    let mut graph = Graph::capture(&s, (&mut input, &mut result), |rec, (input, mut result)| {
        // Allocated, used and freed inside the graph, at every launch.
        rec.temporary::<u32, _>(n, |mut tmp| {
            tmp.copy_from_host_async(&*input, rec)?;
            churn.launch(&KERNELS, rec, config, (&mut tmp, rounds))?;
            result.copy_from_async(&tmp, rec)
        })?;
        // An empty output: nothing to allocate or free at any launch.
        empty = Some(rec.output::<u64>(0)?);
        // Allocated by every launch, kept until the next one.
        let o = rec.output::<u32>(n)?;
        rec.with_output(&o, |mut o| {
            o.copy_from_async(&result, rec)?;
            o.slice_mut(..k)?.fill_async(marker, rec)
        })?;
        out = Some(o);
        // Plain pool allocations would be nodes the graph cannot track.
        expect_err(
            PoolBuffer::<u32>::new(n, rec),
            &["Recorder::temporary"],
            "PoolBuffer::new inside a capture",
        );
        Ok(())
    })
    .unwrap();
    let out = out.unwrap();
    expect_err(
        graph.output(&out).map(drop),
        &["not been launched"],
        "an output before the first launch",
    );
    let launches = 1 + rng.below(60);
    let mut checked = 0;
    for launch in 0..launches {
        let data: Vec<u32> = rng.values(n);
        graph
            .buffers()
            .0
            .as_mut_slice()
            .unwrap()
            .copy_from_slice(&data);
        if launch > 0 {
            // Work on the output on another stream: the next launch frees
            // and re-allocates it after that work.
            let poison: u32 = rng.value();
            graph
                .output(&out)
                .unwrap()
                .fill_async(poison, &other)
                .unwrap();
        }
        graph
            .launch(if launch % 2 == 0 { &s } else { &other })
            .unwrap();
        let got = graph.output(&out).unwrap().to_vec().unwrap();
        let kept = graph.buffers().1.to_vec().unwrap();
        for i in 0..n {
            let churned = churned(data[i], rounds);
            assert_eq!(kept[i], churned, "launch {launch}: result {i} of {n}");
            let want = if i < k { marker } else { churned };
            assert_eq!(got[i], want, "launch {launch}: output {i} of {n} (k {k})");
        }
        checked += 2 * n;
        assert_eq!(graph.output(empty.as_ref().unwrap()).unwrap().len(), 0);
    }
    drop(graph); // frees the last launch's output, stream-ordered
    let after: Vec<u32> = result.to_vec().unwrap();
    assert_eq!(after.len(), n);
    println!(
        "{launches} launches with a temporary and an output of {n} words (rounds {rounds}, \
         marker over {k}): {checked} elements checked"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_graph_dropped_before_any_launch_frees_nothing_it_never_allocated() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_unlaunched");
    let n = 1 + rng.below(100_000);
    let s = ctx.new_stream().unwrap();
    let mut a = DeviceBuffer::<u16>::zeroed(&ctx, n).unwrap();
    let v: u16 = rng.value();
    let graph = Graph::capture(&s, (&mut a,), |rec, (mut a,)| {
        let o = rec.output::<u16>(n)?;
        rec.with_output(&o, |mut o| o.fill_async(v, rec))?;
        rec.temporary::<u16, _>(n, |mut t| {
            t.fill_async(v, rec)?;
            a.copy_from_async(&t, rec)
        })
    })
    .unwrap();
    drop(graph);
    // Nothing ran, nothing was freed that was never allocated (the context
    // has no error), and the stream and buffer work.
    a.fill_async(v, &s).unwrap();
    assert!(a.to_vec().unwrap().iter().all(|&x| x == v));
    // A failed capture with nodes is discarded the same way.
    let failed = Graph::capture(&s, (&mut a,), |rec, (mut a,)| {
        rec.temporary::<u16, _>(n, |mut t| {
            t.fill_async(1, rec)?;
            a.copy_from_async(&t, rec)?;
            Err::<(), _>(cuda_mem::Error::InvalidArgument("the test's own error"))
        })
    });
    expect_err(
        failed,
        &["the test's own error"],
        "an error inside a temporary",
    );
    a.fill_async(v ^ 1, &s).unwrap();
    assert!(a.to_vec().unwrap().iter().all(|&x| x == v ^ 1));
    ctx.synchronize().unwrap();
    println!("graphs with memory nodes dropped unlaunched, or failed: nothing freed, no error");
}

/// The first launch of a kernel in a context loads its module and checks its
/// fingerprint (a synchronous copy): inside a capture too, where the capture
/// (relaxed mode) constrains the capturing stream only.
#[test]
#[ignore = "needs a CUDA device"]
fn a_kernel_first_launched_inside_a_capture_is_loaded_and_checked() {
    // A module of its own, which no other test has loaded.
    static FRESH: Module = cuda_mem::include_kernels!("launch-kernels");
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_first_launch");
    let n = 1 + rng.below(100_000);
    let rounds = 1 + rng.below(5) as u32;
    let data: Vec<u32> = rng.values(n);
    let s = ctx.new_stream().unwrap();
    let mut a = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);
    let mut graph = Graph::capture(&s, (&mut a,), |rec, (mut a,)| {
        churn.launch(&FRESH, rec, config, (&mut a, rounds))
    })
    .unwrap();
    let launches = 1 + rng.below(4);
    for _ in 0..launches {
        graph.launch(&s).unwrap();
    }
    drop(graph);
    let got = a.to_vec().unwrap();
    for (i, (g, x)) in got.iter().zip(&data).enumerate() {
        let mut want = *x;
        for _ in 0..launches {
            want = churned(want, rounds);
        }
        assert_eq!(*g, want, "element {i} of {n}");
    }
    println!("a kernel loaded inside a capture: {launches} launches over {n} words checked");
}

/// cudarc's safe `end_capture` on the capturing stream, inside the
/// recording closure, would hand out an executable of the recorded work,
/// which holds no buffer (launchable after `a` is freed): the capture
/// aborts the process instead. Run in a child process (this test binary,
/// filtered to this test, with `CUDA_MEM_GRAPH_STEAL_CHILD` set).
#[test]
#[ignore = "needs a CUDA device"]
fn a_capture_ended_through_cudarc_aborts_the_process() {
    if std::env::var_os("CUDA_MEM_GRAPH_STEAL_CHILD").is_some() {
        let ctx = gpu();
        let s = ctx.new_stream().unwrap();
        let mut a = DeviceBuffer::<u32>::new(&ctx, 1024).unwrap();
        let mut stolen = None;
        let captured = Graph::capture(&s, (&mut a,), |rec, (mut a,)| {
            a.fill_async(7, rec)?;
            let flags = cuda_mem::cudarc::driver::sys::CUgraphInstantiate_flags(0);
            stolen = rec.end_capture(flags).ok().flatten();
            Ok(())
        });
        // Not reached: had it returned, `a` could be freed and `stolen`
        // launched over the freed memory.
        drop(captured);
        drop(a);
        if let Some(g) = stolen {
            let _ = g.launch();
        }
        std::process::exit(0);
    }
    let exe = std::env::current_exe().unwrap();
    let status = std::process::Command::new(exe)
        .args([
            "a_capture_ended_through_cudarc_aborts_the_process",
            "--exact",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env("CUDA_MEM_GRAPH_STEAL_CHILD", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(6),
            "the child should abort: {status:?}"
        );
    }
    assert!(!status.success());
}

/// A pool buffer that no graph holds cannot be freed on the capturing
/// stream: the free would be a node of the graph (run at every launch).
#[test]
#[ignore = "needs a CUDA device"]
fn a_pool_buffer_is_not_freed_on_the_capturing_stream() {
    let ctx = gpu();
    let mut rng = Rng::from_env("graph_free_in_capture");
    let (s, other) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut a = DeviceBuffer::<u32>::new(&ctx, 64).unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let (n1, n2) = (1 + rng.below(1 << 20), 1 + rng.below(1 << 20));
    let (v1, v2): (u32, u32) = (rng.value(), rng.value());
    let mut freed = PoolBuffer::<u32>::from_pool(&pool, n1, &s).unwrap();
    let mut dropped = PoolBuffer::<u32>::from_pool(&pool, n2, &s).unwrap();
    freed.fill_async(v1, &s).unwrap();
    dropped.fill_async(v2, &s).unwrap();
    // Copies queued before the capture, which may still run inside it.
    let (mut out1, mut out2) = (
        PinnedBuffer::<u32>::new(&ctx, n1).unwrap(),
        PinnedBuffer::<u32>::new(&ctx, n2).unwrap(),
    );
    freed.copy_to_host_async(&mut out1, &s).unwrap();
    dropped.copy_to_host_async(&mut out2, &s).unwrap();
    let used = pool.usage().unwrap().used_current;
    assert!(used >= 4 * (n1 + n2) as u64);
    let graph = Graph::capture(&s, (&mut a,), |rec, (mut a,)| {
        expect_err(
            freed.free_on_stream(rec),
            &["recording a graph"],
            "free in capture",
        );
        // Dropped while the copy queued on the capturing stream before
        // the capture may still read it: kept until the capture has ended.
        drop(dropped);
        assert_eq!(
            pool.usage()?.used_current,
            used,
            "memory dropped inside a capture is kept while it records"
        );
        a.fill_async(1, rec)
    });
    let mut graph = graph.unwrap();
    // Freed once the capture ended, behind the copies queued before it.
    s.synchronize().unwrap();
    assert_eq!(
        pool.usage().unwrap().used_current,
        0,
        "what was dropped inside the capture is freed once it has ended"
    );
    assert!(out1.as_slice().unwrap().iter().all(|&x| x == v1));
    assert!(out2.as_slice().unwrap().iter().all(|&x| x == v2));
    graph.launch(&other).unwrap();
    drop(graph);
    assert!(a.to_vec().unwrap().iter().all(|&x| x == 1));
    // Dropped inside a capture that fails: freed once it has ended.
    let mut kept = PoolBuffer::<u32>::from_pool(&pool, n1, &s).unwrap();
    kept.fill_async(v1, &s).unwrap();
    let failed = Graph::capture(&s, (&mut a,), |_, _| {
        drop(kept);
        Err::<(), _>(cuda_mem::Error::InvalidArgument("the recording gives up"))
    });
    expect_err(failed.map(drop), &["gives up"], "a failed capture");
    s.synchronize().unwrap();
    assert_eq!(pool.usage().unwrap().used_current, 0);
    // The stream stays usable.
    let p2 = PoolBuffer::<u32>::new(8, &s).unwrap();
    p2.free_on_stream(&s).unwrap();
}

/// A graph launch lands in its stream's context whatever context the
/// calling thread has current (none, or another context of the same GPU):
/// relaunches on the stream of the launch before, with nothing used in
/// between (which enter nothing in the ledgers), and launches on another
/// stream or after the host read the memory (which wait for it first).
/// The graph churns a device buffer in place and copies it into an output
/// it allocates, so every launch shows in the result, including the
/// unobserved runs of relaunches; a relaunch leaves the caller's context
/// current. Every element checked.
#[test]
#[ignore = "needs a CUDA device"]
fn a_graph_launch_lands_in_its_streams_context_whatever_context_is_current() {
    let ctx = gpu();
    let other_ctx = CudaContext::new_non_primary(0, 0).expect("a second (non-primary) context");
    let mut rng = Rng::from_env("graph_launch_current");
    let n = 1 + rng.length(100_000);
    let rounds = 1 + rng.below(4) as u32;
    let first: Vec<u32> = rng.values(n);
    let (s, later) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut data = DeviceBuffer::from_slice(&ctx, &first).unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);
    churn.check(&KERNELS, &ctx).unwrap();
    let mut out = None;
    let mut graph = Graph::capture(&s, (&mut data,), |rec, (mut data,)| {
        churn.launch(&KERNELS, rec, config, (&mut data, rounds))?;
        let o = rec.output::<u32>(n)?;
        rec.with_output(&o, |mut o| o.copy_from_async(&data, rec))?;
        out = Some(o);
        Ok(())
    })
    .unwrap();
    let out = out.unwrap();
    let (mut launched, mut checked, mut relaunches) = (0u32, 0usize, 0usize);
    let mut last: Option<usize> = None;
    for current in [Current::Nothing, Current::Other(&other_ctx)] {
        for step in 0..12 {
            // Mostly `s`: runs of relaunches; now and then `later`.
            let on = usize::from(rng.below(4) == 0);
            let stream = [&s, &later][on];
            let relaunch = last == Some(on);
            let (result, kept) = with_current(current, || graph.launch(stream));
            result.unwrap_or_else(|e| panic!("{current:?}, step {step}: {e}"));
            launched += 1;
            last = Some(on);
            if relaunch {
                relaunches += 1;
                assert!(
                    kept,
                    "{current:?}, step {step}: a relaunch changed the thread's current context"
                );
            }
            // Read back now and then, after unobserved runs of relaunches
            // (a read orders the memory: the next launch waits for it).
            if rng.below(3) == 0 || step == 11 {
                let want: Vec<u32> = first
                    .iter()
                    .map(|&x| churned(x, launched * rounds))
                    .collect();
                let got = graph.buffers().0.to_vec().unwrap();
                let output = graph.output(&out).unwrap().to_vec().unwrap();
                for i in 0..n {
                    assert_eq!(
                        got[i], want[i],
                        "{current:?}, step {step}, {launched} launches: element {i} of {n}"
                    );
                    assert_eq!(
                        output[i], want[i],
                        "{current:?}, step {step}, {launched} launches: output {i} of {n}"
                    );
                }
                checked += 2 * n;
                last = None;
            }
        }
    }
    drop(graph);
    let after = data.to_vec().unwrap();
    assert!(
        (0..n).all(|i| after[i] == churned(first[i], launched * rounds)),
        "the buffer after the graph is dropped"
    );
    println!(
        "{launched} launches ({relaunches} relaunches) of {n} words with no context or another \
         current: {checked} elements checked"
    );
}
