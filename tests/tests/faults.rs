//! Faults: a kernel that faults (a store to an address no allocation covers,
//! or `trap`) poisons its CUDA context for good. After that, every call of
//! cuda-mem must return `Err` (never panic), and dropping buffers of every
//! kind must neither panic nor hang (the memory is leaked and the error
//! recorded in the context, as cudarc does).
//!
//! A poisoned context cannot be repaired inside a process, so the fault runs
//! in a child process: the test re-runs its own binary
//! (`std::env::current_exe()`) on the child test, with `CUDA_MEM_FAULT_CHILD`
//! set, and checks its exit status (0: the child finished, printed its marker
//! and nothing panicked) and output, killing it if it hangs. Run alone
//! (without that variable) the child test does nothing.
//!
//! Under compute-sanitizer the fault test is skipped: the fault and every
//! failing call after it count as sanitizer errors.
//!
//! Without a driver every entry point returns `Err`: `no_driver.rs`.

use cuda_mem::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::cudarc::driver::{LaunchConfig, PushKernelArg};
use cuda_mem::cudarc::nvrtc::Ptx;
use cuda_mem::{
    Buffer, CudaStream, DeviceBuffer, MemPool, MemoryKind, PinnedBuffer, PitchedBuffer, PoolBuffer,
    UnifiedBuffer,
};
use cuda_mem_tests::{
    assemble_ptx, gpu, run_test_in_child, skip_driver_errors_under_sanitizer, Rng,
};

/// Two kernels that fault: a 32-bit store to the address given as the only
/// parameter, and a `trap`.
const FAULT_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry cuda_mem_test_store_to(
	.param .u64 cuda_mem_test_store_to_param_0
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<2>;

	ld.param.u64 	%rd1, [cuda_mem_test_store_to_param_0];
	mov.u32 	%r1, 42;
	st.global.u32 	[%rd1], %r1;
	ret;
}

.visible .entry cuda_mem_test_trap()
{
	trap;
	ret;
}
"#;

/// The variable that turns the child test on, and says which fault.
const CHILD_VAR: &str = "CUDA_MEM_FAULT_CHILD";
/// The child's last line.
const DONE: &str = "cuda-mem fault child: done";
/// Marks a call that returned `Ok` where `Err` was required.
const WRONG: &str = "(an Err was required)";

#[test]
fn the_fault_kernels_assemble() {
    assemble_ptx(FAULT_PTX, "faults");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_faulting_kernel_poisons_the_context_and_every_later_call_errs() {
    if skip_driver_errors_under_sanitizer(
        "a_faulting_kernel",
        "the fault and the failing calls after it are what the test is about",
    ) {
        return;
    }
    for (fault, code) in [
        ("store", "CUDA_ERROR_ILLEGAL_ADDRESS"),
        ("trap", "CUDA driver error"),
    ] {
        let start = Instant::now();
        let run = run_test_in_child(
            "child_faulting_kernel",
            &[(CHILD_VAR, fault)],
            Duration::from_secs(180),
        );
        let out = run.output();
        eprintln!(
            "=== child with the {fault} fault ({:.1?}):\n{out}",
            start.elapsed()
        );
        assert!(
            run.status.is_some(),
            "{fault}: the child hung (killed after 180 s)"
        );
        assert!(!out.contains("panicked"), "{fault}: the child panicked");
        assert!(run.status.unwrap().success(), "{fault}: the child failed");
        assert!(
            run.stdout.contains(DONE),
            "{fault}: the child did not finish"
        );
        assert!(
            run.stdout.contains("the fault: CUDA driver error") && run.stdout.contains(code),
            "{fault}: synchronize did not report the fault as {code}"
        );
        assert!(
            !run.stdout.contains(WRONG),
            "{fault}: a call succeeded after the fault"
        );
    }
}

/// Every operation of `buf` after the fault, each of which must return `Err`.
fn every_op_errs<K: MemoryKind>(
    buf: &mut Buffer<u32, K>,
    staging: &mut PinnedBuffer<u32>,
    stream: &Arc<CudaStream>,
    must_err: &mut dyn FnMut(String, cuda_mem::Result<()>),
) {
    let (n, k) = (buf.len(), K::NAME);
    let mut e = |what: &str, r: cuda_mem::Result<()>| must_err(format!("{k} {what}"), r);
    e("fill", buf.fill(0x1234_5678));
    e("fill_async", buf.fill_async(0x1234_5678, stream));
    e("view fill", buf.slice_mut(1..).and_then(|mut v| v.fill(9)));
    e("memset", buf.memset(1));
    e("memset_async", buf.memset_async(2, stream));
    e("copy_from_host", buf.copy_from_host(&vec![3; n]));
    e("copy_to_host", buf.copy_to_host(&mut vec![0; n]));
    e("to_vec", buf.to_vec().map(drop));
    e("copy_from", buf.copy_from(&*staging));
    e("copy_from_async", buf.copy_from_async(&*staging, stream));
    e(
        "copy_from_host_async",
        buf.copy_from_host_async(&*staging, stream),
    );
    e(
        "copy_to_host_async",
        buf.copy_to_host_async(staging, stream),
    );
    e("synchronize", buf.synchronize());
}

/// The child: buffers of every kind, a faulting kernel, then every call.
#[test]
#[ignore = "a child of a_faulting_kernel_poisons_the_context_and_every_later_call_errs (does nothing alone)"]
fn child_faulting_kernel() {
    let Ok(fault) = std::env::var(CHILD_VAR) else {
        eprintln!("child_faulting_kernel runs only as the child of a_faulting_kernel_poisons_the_context_and_every_later_call_errs");
        return;
    };
    let mut rng = Rng::from_env("child_faulting_kernel");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let n = 2 + rng.below(100_000);
    let data: Vec<u32> = rng.values(n);
    let mut dev = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut pinned = PinnedBuffer::from_slice(&ctx, &data).unwrap();
    let mut unified = UnifiedBuffer::from_slice(&ctx, &data).unwrap();
    let mut pooled = PoolBuffer::<u32>::new(n, &stream).unwrap();
    pooled.copy_from_host(&data).unwrap();
    let mut from_pool = PoolBuffer::<u32>::from_pool(&pool, n, &stream).unwrap();
    from_pool.copy_from_host(&data).unwrap();
    let (w, h) = (1 + rng.below(1000), 2 + rng.below(30));
    let data_2d: Vec<u32> = rng.values(w * h);
    let mut pitched = PitchedBuffer::from_slice(&ctx, &data_2d, w, h).unwrap();
    let other_2d = PitchedBuffer::<u32>::zeroed(&ctx, w, h).unwrap();
    let mut staging = PinnedBuffer::<u32>::new(&ctx, n).unwrap();
    let mut staging_2d = PinnedBuffer::<u32>::new(&ctx, w * h).unwrap();
    // A 12-byte element: its fill takes the fill kernel, not a memset.
    let mut dev12 = DeviceBuffer::<[u8; 12]>::zeroed(&ctx, n).unwrap();
    // Everything works before the fault.
    for (what, got) in [
        ("device", dev.to_vec().unwrap()),
        ("pinned", pinned.as_slice().unwrap().to_vec()),
        ("unified", unified.to_vec().unwrap()),
        ("pool", pooled.to_vec().unwrap()),
        ("MemPool", from_pool.to_vec().unwrap()),
    ] {
        assert_eq!(got, data, "{what} before the fault");
    }
    assert_eq!(pitched.to_vec().unwrap(), data_2d);
    dev12.fill(rng.value()).unwrap();
    ctx.synchronize().unwrap();

    let module = ctx.load_module(Ptx::from_src(FAULT_PTX)).unwrap();
    let (entry, bad_address) = match fault.as_str() {
        "store" => ("cuda_mem_test_store_to", 0x10u64),
        "trap" => ("cuda_mem_test_trap", 0),
        other => panic!("{CHILD_VAR}={other}: want store or trap"),
    };
    let func = module.load_function(entry).unwrap();
    let mut launch = stream.launch_builder(&func);
    if fault == "store" {
        launch.arg(&bad_address);
    }
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel faults on purpose: it stores to device address 0x10,
    // which no allocation covers (or executes `trap`). The GPU catches the
    // fault and the driver poisons the context, which is what is tested; no
    // host memory and no live allocation is written. The parameter list
    // matches the kernel's (one u64, or none).
    unsafe { launch.launch(one) }.expect("the launch itself is accepted");
    // Work queued behind the fault (accepted or not, it never runs).
    println!(
        "queued behind the fault: fill_async -> {:?}",
        dev.fill_async(5, &stream)
    );
    let fault_err = cuda_mem::Error::from(
        stream
            .synchronize()
            .expect_err("synchronize after the fault"),
    );
    println!("the fault: {fault_err}");

    let mut wrong = Vec::new();
    let mut must_err = |what: String, r: cuda_mem::Result<()>| match r {
        Err(e) => println!("after the fault: {what} -> Err({e})"),
        Ok(()) => {
            println!("after the fault: {what} -> Ok {WRONG}");
            wrong.push(what);
        }
    };
    // Allocations of every kind.
    must_err(
        "DeviceBuffer::new".into(),
        DeviceBuffer::<u32>::new(&ctx, n).map(drop),
    );
    must_err(
        "DeviceBuffer::zeroed".into(),
        DeviceBuffer::<u32>::zeroed(&ctx, n).map(drop),
    );
    must_err(
        "DeviceBuffer::from_slice".into(),
        DeviceBuffer::from_slice(&ctx, &data).map(drop),
    );
    must_err(
        "PinnedBuffer::new".into(),
        PinnedBuffer::<u32>::new(&ctx, n).map(drop),
    );
    must_err(
        "UnifiedBuffer::new".into(),
        UnifiedBuffer::<u32>::new(&ctx, n).map(drop),
    );
    must_err(
        "PoolBuffer::new".into(),
        PoolBuffer::<u32>::new(n, &stream).map(drop),
    );
    must_err(
        "PoolBuffer::from_pool".into(),
        PoolBuffer::<u32>::from_pool(&pool, n, &stream).map(drop),
    );
    must_err(
        "PitchedBuffer::new".into(),
        PitchedBuffer::<u32>::new(&ctx, w, h).map(drop),
    );
    // Every operation on every kind.
    every_op_errs(&mut dev, &mut staging, &stream, &mut must_err);
    every_op_errs(&mut pinned, &mut staging, &stream, &mut must_err);
    every_op_errs(&mut unified, &mut staging, &stream, &mut must_err);
    every_op_errs(&mut pooled, &mut staging, &stream, &mut must_err);
    every_op_errs(&mut from_pool, &mut staging, &stream, &mut must_err);
    must_err("12-byte fill (kernel)".into(), dev12.fill(rng.value()));
    must_err(
        "12-byte fill_async (kernel)".into(),
        dev12.fill_async(rng.value(), &stream),
    );
    must_err("pinned as_slice".into(), pinned.as_slice().map(drop));
    must_err(
        "pinned as_mut_slice".into(),
        pinned.as_mut_slice().map(drop),
    );
    must_err("unified as_slice".into(), unified.as_slice().map(drop));
    must_err(
        "unified prefetch_to_device".into(),
        unified.prefetch_to_device(&stream),
    );
    must_err(
        "unified prefetch_to_host".into(),
        unified.prefetch_to_host(&stream),
    );
    must_err("pitched fill".into(), pitched.fill(7));
    must_err("pitched fill_async".into(), pitched.fill_async(7, &stream));
    must_err(
        "pitched row fill".into(),
        pitched.row_mut(h - 1).and_then(|mut r| r.fill(8)),
    );
    must_err("pitched memset".into(), pitched.memset(1));
    must_err(
        "pitched copy_from_host".into(),
        pitched.copy_from_host(&data_2d),
    );
    must_err(
        "pitched copy_to_host".into(),
        pitched.copy_to_host(&mut vec![0; w * h]),
    );
    must_err("pitched to_vec".into(), pitched.to_vec().map(drop));
    must_err("pitched copy_from".into(), pitched.copy_from(&other_2d));
    must_err(
        "pitched copy_from_host_async".into(),
        pitched.copy_from_host_async(&staging_2d, &stream),
    );
    must_err(
        "pitched copy_to_host_async".into(),
        pitched.copy_to_host_async(&mut staging_2d, &stream),
    );
    must_err("pitched synchronize".into(), pitched.synchronize());
    must_err("pool free_on_stream".into(), pooled.free_on_stream(&stream));
    must_err(
        "stream synchronize".into(),
        stream.synchronize().map_err(Into::into),
    );
    must_err(
        "context synchronize".into(),
        ctx.synchronize().map_err(Into::into),
    );

    // Calls the driver may or may not refuse now: they must not panic.
    println!(
        "after the fault (either way): MemPool::new -> {:?}",
        MemPool::new(&ctx).map(drop)
    );
    println!(
        "after the fault (either way): MemPool::usage -> {:?}",
        pool.usage()
    );
    println!(
        "after the fault (either way): MemPool::trim_to -> {:?}",
        pool.trim_to(0)
    );
    println!(
        "after the fault (either way): advise -> {:?}",
        unified.advise(cuda_mem::Advice::ReadMostly(true))
    );
    println!(
        "after the fault (either way): new_stream -> {:?}",
        ctx.new_stream().map(drop)
    );
    println!(
        "after the fault (either way): a zero-length DeviceBuffer (no driver call) -> {:?}",
        DeviceBuffer::<u32>::new(&ctx, 0)
    );
    println!(
        "after the fault (either way): cuda_mem::is_available() -> {}",
        cuda_mem::is_available()
    );

    // Drops: none may panic or hang.
    let timed = |what: &str, f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        println!("dropped {what} in {:.1?}", start.elapsed());
    };
    let mut dev = Some(dev);
    timed("the device buffer", &mut || drop(dev.take()));
    let mut pinned = Some(pinned);
    timed("the pinned buffer", &mut || drop(pinned.take()));
    let mut unified = Some(unified);
    timed("the unified buffer", &mut || drop(unified.take()));
    let mut from_pool = Some(from_pool);
    timed("the MemPool buffer", &mut || drop(from_pool.take()));
    let mut pitched = Some((pitched, other_2d));
    timed("the pitched buffers", &mut || drop(pitched.take()));
    let mut rest = Some((staging, staging_2d, dev12));
    timed("the staging and 12-byte buffers", &mut || drop(rest.take()));
    let mut pool = Some(pool);
    timed("the MemPool", &mut || drop(pool.take()));
    let mut kernel = Some((func, module));
    timed("the module", &mut || drop(kernel.take()));
    let mut streams = Some(stream);
    timed("the stream", &mut || drop(streams.take()));
    println!("the context's recorded error: {:?}", ctx.check_err());
    let mut ctx = Some(ctx);
    timed("the context", &mut || drop(ctx.take()));
    println!("{DONE}");
    assert!(
        wrong.is_empty(),
        "calls that succeeded after the fault: {wrong:?}"
    );
}
