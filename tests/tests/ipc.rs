//! CUDA IPC between two processes: the test binary re-runs itself as the
//! child (one `#[ignore]`d child test per scenario, which does nothing
//! unless `CUDA_MEM_IPC_CHILD` is set). The parent passes handles and seeds
//! in the child's environment (or over a Unix socket, for a pool's file
//! descriptor) and the child answers with `IPC:` lines on stdout; the
//! parent can send it lines on stdin. Every wait has a time limit, so a
//! hang fails the test instead of blocking the run.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::ipc::{recv_fd, send_fd, IpcEvent, IpcEventHandle, IpcHandle};
use cuda_mem::prelude::*;
use cuda_mem::{DeviceBuffer, DeviceCopy, LaunchConfig, MemPool, Module, PoolBuffer};
use cuda_mem_launch_kernels::{churn, churned, histogram, write_indices};
use cuda_mem_tests::spin::{launch, spin_copy};
use cuda_mem_tests::{expect_err, gpu, seed_from_env, Rng};

/// Marks a child process; its value names the scenario's data.
const CHILD: &str = "CUDA_MEM_IPC_CHILD";

/// The `#[kernel]` fns of `tests/launch-kernels` (built by `tests/build.rs`).
static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

/// 12 bytes: not a power of two, so views are unaligned to 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Sample {
    id: u32,
    value: f32,
    tag: [u16; 2],
}

/// A running child test process and its channels.
struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    log: Arc<std::sync::Mutex<String>>,
}

impl Peer {
    /// Starts the child test `test` of this binary with `env` added.
    fn spawn(test: &str, env: &[(&str, String)]) -> Self {
        let mut cmd = cuda_mem_tests::child_test_command(test, env);
        cmd.stdin(Stdio::piped());
        let mut child = cmd.spawn().expect("start the child test process");
        let (tx, lines) = std::sync::mpsc::channel();
        let log = Arc::new(std::sync::Mutex::new(String::new()));
        let stdout = child.stdout.take().expect("child stdout");
        let out_log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                out_log.lock().unwrap().push_str(&format!("out: {line}\n"));
                // libtest prints "test NAME ... " without a newline, so the
                // child's first message can follow it on the same line.
                if let Some(at) = line.find("IPC:") {
                    let _ = tx.send(line[at + 4..].to_string());
                }
            }
        });
        let stderr = child.stderr.take().expect("child stderr");
        let err_log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                err_log.lock().unwrap().push_str(&format!("err: {line}\n"));
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            log,
        }
    }

    fn output(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The next `IPC:` line of the child, within `limit`.
    fn line(&mut self, limit: Duration) -> String {
        match self.lines.recv_timeout(limit) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                panic!(
                    "the child sent nothing within {limit:?}:\n{}",
                    self.output()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = self.child.wait();
                panic!("the child ended without a message:\n{}", self.output())
            }
        }
    }

    /// Sends a line to the child's stdin.
    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("child stdin");
        writeln!(stdin, "{line}").expect("write to the child");
        stdin.flush().expect("flush to the child");
    }

    /// Waits (at most `limit`) for the child to exit and asserts success.
    fn finish(mut self, limit: Duration) {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the child") {
                // Let the reader threads drain.
                std::thread::sleep(Duration::from_millis(50));
                assert!(
                    status.success(),
                    "the child failed ({status}):\n{}",
                    self.output()
                );
                return;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the child did not exit within {limit:?}:\n{}",
                    self.output()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// In a child: the next line the parent sent on stdin.
fn read_parent_line() -> String {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .expect("read from the parent");
    line.trim().to_string()
}

/// In a child: a message to the parent.
fn tell_parent(msg: &str) {
    println!("IPC:{msg}");
    std::io::stdout().flush().unwrap();
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `bytes` of a handle of `T` rewritten to claim `len` elements, with the
/// checksum recomputed (FNV-1a, as anyone who reads the format can): the
/// checksum cannot stop this, only the import's check of the mapping can.
fn forge_len<T>(bytes: &[u8], len: u64) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[72..80].copy_from_slice(&len.wrapping_mul(size_of::<T>() as u64).to_le_bytes());
    bytes[80..88].copy_from_slice(&len.to_le_bytes());
    reseal(&mut bytes);
    bytes
}

/// Recomputes the checksum (FNV-1a over all but the last 8 bytes) of a
/// rewritten handle, as anyone who reads the format can.
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len();
    let sum = bytes[..n - 8]
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
}

/// `bytes` rewritten to name the running process `pid` as the exporter
/// (its start time from `/proc`), with the checksum recomputed.
fn forge_exporter(bytes: &[u8], pid: u32) -> Vec<u8> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("a running process");
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let start: u64 = rest
        .split_ascii_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let mut bytes = bytes.to_vec();
    bytes[112..116].copy_from_slice(&pid.to_le_bytes());
    bytes[116..124].copy_from_slice(&start.to_le_bytes());
    reseal(&mut bytes);
    bytes
}

fn env(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("the parent sets {var}"))
}

/// Free device memory of `ctx`'s device, in bytes.
fn free_memory(ctx: &Arc<cuda_mem::CudaContext>) -> usize {
    ctx.bind_to_thread().unwrap();
    cuda_mem::cudarc::driver::result::mem_get_info().unwrap().0
}

const LIMIT: Duration = Duration::from_secs(120);

/// The GPU tests of this binary run one at a time: the leak check reads the
/// device's free memory, which a concurrent test would change.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn garbage_bytes_are_refused_with_a_remedy() {
    let mut rng = Rng::from_env("garbage_bytes_are_refused_with_a_remedy");
    for len in [
        0,
        1,
        10,
        IpcHandle::<u8>::BYTES - 1,
        IpcHandle::<u8>::BYTES,
        500,
    ] {
        let bytes = rng.bytes(len);
        expect_err(
            IpcHandle::<Sample>::from_bytes(&bytes),
            &["CUDA IPC", "to_bytes"],
            "random bytes as a buffer handle",
        );
        expect_err(
            IpcEventHandle::from_bytes(&bytes),
            &["CUDA IPC", "to_bytes"],
            "random bytes as an event handle",
        );
    }
}

// ---------------------------------------------------------------------------
// 1. Device memory: written here, read there; written there, read here.

#[test]
#[ignore = "needs a CUDA device"]
fn a_device_buffer_crosses_processes_both_ways() {
    let _serial = serial();
    let seed = seed_from_env("a_device_buffer_crosses_processes_both_ways");
    let mut rng = Rng::new(seed);
    let ctx = gpu();
    let n = 2 * rng.below(300_000) + 1001; // odd
    let data: Vec<Sample> = rng.values(n);
    let mut buf = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    buf.synchronize().unwrap();
    let handle = buf.export_ipc().unwrap();
    assert_eq!(handle.len(), n);
    // CUDA cannot open a handle in the process that exported it.
    expect_err(
        handle.open(&ctx),
        &["exported by this very process", "another process"],
        "open in the exporting process",
    );
    // The child writes this odd, unaligned range back.
    let start = 1 + rng.below(n / 2);
    let end = start + 1 + rng.below(n - start - 1);
    let peer = Peer::spawn(
        "child_device_buffer",
        &[
            (CHILD, "device".into()),
            ("CUDA_MEM_IPC_HANDLE", hex(&handle.to_bytes())),
            ("CUDA_MEM_IPC_SEED", seed.to_string()),
            ("CUDA_MEM_IPC_RANGE", format!("{start} {end}")),
        ],
    );
    peer.finish(LIMIT);
    // The child's writes are complete: it synchronised and closed its import.
    let mut expected = data.clone();
    let written: Vec<Sample> = Rng::new(seed ^ 0xc41d).values(end - start);
    expected[start..end].copy_from_slice(&written);
    let mut got = vec![
        Sample {
            id: 0xdead_beef,
            value: f32::NAN,
            tag: [0xbad; 2]
        };
        n
    ];
    buf.copy_to_host(&mut got).unwrap();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(
            cuda_mem::bytes_of(g),
            cuda_mem::bytes_of(e),
            "element {i} ({start}..{end} written by the child)"
        );
    }
}

#[test]
#[ignore = "a child of a_device_buffer_crosses_processes_both_ways (does nothing alone)"]
fn child_device_buffer() {
    if std::env::var(CHILD).as_deref() != Ok("device") {
        eprintln!("child_device_buffer runs only as the child of a_device_buffer_crosses_processes_both_ways");
        return;
    }
    let seed: u64 = env("CUDA_MEM_IPC_SEED").parse().unwrap();
    let mut rng = Rng::new(seed);
    let n = 2 * rng.below(300_000) + 1001;
    let data: Vec<Sample> = rng.values(n);
    let bytes = unhex(&env("CUDA_MEM_IPC_HANDLE"));
    let range = env("CUDA_MEM_IPC_RANGE");
    let (start, end) = range.split_once(' ').unwrap();
    let (start, end): (usize, usize) = (start.parse().unwrap(), end.parse().unwrap());
    let ctx = gpu();
    // The wrong element type: same size, another layout; another size.
    expect_err(
        IpcHandle::<[u8; 12]>::from_bytes(&bytes),
        &["fingerprint", "[u8; 12]", "same struct definition"],
        "open as [u8; 12]",
    );
    expect_err(
        IpcHandle::<u32>::from_bytes(&bytes),
        &["12 bytes", "4 bytes"],
        "open as u32",
    );
    // A length altered after to_bytes passes the checksum but not the
    // open: the buffer would reach past the exporter's allocation.
    for more in [1, 1 + (4 << 20) / 12] {
        let forged =
            IpcHandle::<Sample>::from_bytes(&forge_len::<Sample>(&bytes, (n + more) as u64))
                .expect("a forged length with a valid checksum reads");
        assert_eq!(forged.len(), n + more);
        expect_err(
            forged.open(&ctx),
            &["the length was altered", "to_bytes"],
            &format!("open a handle forged to {more} more elements"),
        );
    }
    let handle = IpcHandle::<Sample>::from_bytes(&bytes).unwrap();
    assert_eq!(handle.len(), n);
    let mut imported = handle.open(&ctx).unwrap();
    imported.check_exporter().unwrap();
    // A second import of the same memory would escape the first's order.
    expect_err(
        handle.open(&ctx),
        &["already open in this process", "existing ImportedBuffer"],
        "open twice",
    );
    assert_eq!(imported.len(), n);
    // Every element, through the whole buffer and an unaligned view.
    let mut got = vec![
        Sample {
            id: 1,
            value: -1.0,
            tag: [7; 2]
        };
        n
    ];
    imported.copy_to_host(&mut got).unwrap();
    for (i, (g, e)) in got.iter().zip(&data).enumerate() {
        assert_eq!(cuda_mem::bytes_of(g), cuda_mem::bytes_of(e), "element {i}");
    }
    let view = imported.slice(start..end).unwrap().to_vec().unwrap();
    assert_eq!(
        cuda_mem::bytes_of_slice(&view),
        cuda_mem::bytes_of_slice(&data[start..end])
    );
    // The other direction: write a range, complete it, close the import.
    let written: Vec<Sample> = Rng::new(seed ^ 0xc41d).values(end - start);
    imported
        .slice_mut(start..end)
        .unwrap()
        .copy_from_host(&written)
        .unwrap();
    imported.synchronize().unwrap();
    drop(imported);
    tell_parent("done");
}

// ---------------------------------------------------------------------------
// 2. Ordering: the reader's GPU waits for the writer's slow kernel.

/// [`cuda_mem_tests::spin`]'s spin: about 10 s at 2 GHz: far longer than the child needs to start, open the
/// handles and queue its wait.
const SLOW: u64 = 20_000_000_000;

#[test]
#[ignore = "needs a CUDA device"]
fn the_reader_waits_for_the_writers_slow_kernel_through_an_ipc_event() {
    let _serial = serial();
    let seed = seed_from_env("the_reader_waits_for_the_writers_slow_kernel_through_an_ipc_event");
    let mut rng = Rng::new(seed);
    let ctx = gpu();
    let f = spin_copy(&ctx);
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let n = 2 * rng.below(1 << 18) + 1;
    let data: Vec<u32> = rng.values(n);
    let src = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut dst = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    dst.memset(0x5a).unwrap(); // poison
                               // Exported before the kernel: an export waits for the buffer's queued
                               // work (no kernel of this process may still run on memory another
                               // process can write).
    let handle = dst.export_ipc().unwrap();
    {
        let a = src.kernel_arg(&s1).unwrap();
        let b = dst.kernel_arg_mut(&s1).unwrap();
        launch(&f, &s1, &a, &b, n, SLOW);
    }
    // Recorded on another stream: the buffer's order puts it after the kernel.
    let ready = IpcEvent::new(&ctx).unwrap();
    ready.record_after(&dst, &s2).unwrap();
    let start = Instant::now();
    let mut peer = Peer::spawn(
        "child_ordering",
        &[
            (CHILD, "ordering".into()),
            ("CUDA_MEM_IPC_HANDLE", hex(&handle.to_bytes())),
            ("CUDA_MEM_IPC_EVENT", hex(&ready.handle().to_bytes())),
            ("CUDA_MEM_IPC_SEED", seed.to_string()),
        ],
    );
    let queued = peer.line(LIMIT);
    assert_eq!(
        queued, "queued-while-running",
        "the child must queue its wait while the writer's kernel still runs (else this test proves nothing):\n{}",
        peer.output()
    );
    peer.finish(LIMIT);
    eprintln!("child done after {:?}", start.elapsed());
    // The child checked every element; the writer's data is intact here too.
    assert_eq!(dst.to_vec().unwrap(), data);
}

#[test]
#[ignore = "a child of the_reader_waits_for_the_writers_slow_kernel_through_an_ipc_event (does nothing alone)"]
fn child_ordering() {
    if std::env::var(CHILD).as_deref() != Ok("ordering") {
        eprintln!("child_ordering runs only as the child of the_reader_waits_for_the_writers_slow_kernel_through_an_ipc_event");
        return;
    }
    let seed: u64 = env("CUDA_MEM_IPC_SEED").parse().unwrap();
    let mut rng = Rng::new(seed);
    let n = 2 * rng.below(1 << 18) + 1;
    let data: Vec<u32> = rng.values(n);
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let imported = IpcHandle::<u32>::from_bytes(&unhex(&env("CUDA_MEM_IPC_HANDLE")))
        .unwrap()
        .open(&ctx)
        .unwrap();
    let ready = IpcEvent::open(
        &ctx,
        &IpcEventHandle::from_bytes(&unhex(&env("CUDA_MEM_IPC_EVENT"))).unwrap(),
    )
    .unwrap();
    let running = !ready.is_complete().unwrap();
    ready.order_before(&imported, &stream).unwrap();
    tell_parent(if running {
        "queued-while-running"
    } else {
        "queued-after-completion"
    });
    // Host access waits for the buffer's order, which holds the GPU wait.
    let mut got = vec![0x0bad_f00d_u32; n];
    imported.copy_to_host(&mut got).unwrap();
    for (i, (g, e)) in got.iter().zip(&data).enumerate() {
        assert_eq!(
            g, e,
            "element {i}: read before the writer's kernel finished"
        );
    }
    assert!(ready.is_complete().unwrap());
}

// ---------------------------------------------------------------------------
// 3. A shareable pool: its descriptor over a Unix socket, an allocation's handle.

#[test]
#[ignore = "needs a CUDA device"]
fn a_pool_allocation_crosses_processes_with_its_pool_descriptor() {
    let _serial = serial();
    let seed = seed_from_env("a_pool_allocation_crosses_processes_with_its_pool_descriptor");
    let mut rng = Rng::new(seed);
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let n = 2 * rng.below(200_000) + 3;
    let data: Vec<Sample> = rng.values(n);
    // A pool that is not shareable cannot be exported.
    let private = MemPool::new(&ctx).unwrap();
    expect_err(
        private.export_fd(),
        &["new_shareable"],
        "export a private pool",
    );
    let mut private_buf = PoolBuffer::<Sample>::from_pool(&private, 5, &stream).unwrap();
    expect_err(
        private_buf.export_ipc(),
        &["new_shareable"],
        "export an allocation of a private pool",
    );
    let pool = MemPool::new_shareable(&ctx).unwrap();
    let mut buf = PoolBuffer::<Sample>::from_pool(&pool, n, &stream).unwrap();
    buf.copy_from_host(&data).unwrap();
    let handle = buf.export_ipc().unwrap();
    // Bytes that name another live process (pid 1) as the exporter pass the
    // this-process check, but a pool created here is no pool to import
    // into: it could hand out `buf` itself under a second owner.
    let elsewhere = IpcHandle::<Sample>::from_bytes(&forge_exporter(&handle.to_bytes(), 1))
        .expect("a forged exporter with a valid checksum reads");
    expect_err(
        elsewhere.open_in_pool(&pool),
        &["created here", "MemPool::import_fd"],
        "open_in_pool into the exporter's own pool",
    );
    let path = std::env::temp_dir().join(format!("cuda-mem-ipc-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let start = 1 + rng.below(n - 2);
    let end = start + 1 + rng.below(n - start - 1);
    let peer = Peer::spawn(
        "child_pool",
        &[
            (CHILD, "pool".into()),
            ("CUDA_MEM_IPC_SOCKET", path.display().to_string()),
            ("CUDA_MEM_IPC_SEED", seed.to_string()),
            ("CUDA_MEM_IPC_RANGE", format!("{start} {end}")),
        ],
    );
    listener.set_nonblocking(true).unwrap();
    let t = Instant::now();
    let socket = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && t.elapsed() < LIMIT => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("the child did not connect: {e}\n{}", peer.output()),
        }
    };
    socket.set_nonblocking(false).unwrap();
    use std::os::fd::AsFd;
    let fd = pool.export_fd().unwrap();
    send_fd(&socket, fd.as_fd(), &handle.to_bytes()).unwrap();
    peer.finish(LIMIT);
    let _ = std::fs::remove_file(&path);
    let mut expected = data.clone();
    let written: Vec<Sample> = Rng::new(seed ^ 0x9001).values(end - start);
    expected[start..end].copy_from_slice(&written);
    let got = buf.to_vec().unwrap();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(cuda_mem::bytes_of(g), cuda_mem::bytes_of(e), "element {i}");
    }
    buf.free_on_stream(&stream).unwrap();
}

#[test]
#[ignore = "a child of a_pool_allocation_crosses_processes_with_its_pool_descriptor (does nothing alone)"]
fn child_pool() {
    if std::env::var(CHILD).as_deref() != Ok("pool") {
        eprintln!("child_pool runs only as the child of a_pool_allocation_crosses_processes_with_its_pool_descriptor");
        return;
    }
    let seed: u64 = env("CUDA_MEM_IPC_SEED").parse().unwrap();
    let mut rng = Rng::new(seed);
    let n = 2 * rng.below(200_000) + 3;
    let data: Vec<Sample> = rng.values(n);
    let range = env("CUDA_MEM_IPC_RANGE");
    let (start, end) = range.split_once(' ').unwrap();
    let (start, end): (usize, usize) = (start.parse().unwrap(), end.parse().unwrap());
    let ctx = gpu();
    let socket = std::os::unix::net::UnixStream::connect(env("CUDA_MEM_IPC_SOCKET")).unwrap();
    let mut message = vec![0u8; IpcHandle::<Sample>::BYTES];
    let (got_bytes, fd) = recv_fd(&socket, &mut message).unwrap();
    assert_eq!(got_bytes, message.len());
    let pool = MemPool::import_fd(&ctx, fd).unwrap();
    let handle = IpcHandle::<Sample>::from_bytes(&message).unwrap();
    expect_err(
        handle.open(&ctx),
        &["pool allocation", "open_in_pool"],
        "a pool handle through open",
    );
    // A length altered after to_bytes (1 TiB more) is refused, and the
    // refused import is freed again.
    let forged = IpcHandle::<Sample>::from_bytes(&forge_len::<Sample>(
        &message,
        (n as u64) + (1u64 << 40) / 12,
    ))
    .unwrap();
    expect_err(
        forged.open_in_pool(&pool),
        &["the length was altered", "to_bytes"],
        "open_in_pool of a handle forged to 1 TiB more",
    );
    let mut imported = handle.open_in_pool(&pool).unwrap();
    // A second import of the same allocation: refused when the driver hands
    // out the first one's address (freeing it would free the first import);
    // a separate mapping is its own import, and dropping it leaves the
    // first intact (every element is checked below).
    match handle.open_in_pool(&pool) {
        Err(e) => assert!(e.to_string().contains("already open"), "{e}"),
        Ok(second) => drop(second),
    }
    let mut got = vec![
        Sample {
            id: 3,
            value: 0.5,
            tag: [1; 2]
        };
        n
    ];
    imported.copy_to_host(&mut got).unwrap();
    for (i, (g, e)) in got.iter().zip(&data).enumerate() {
        assert_eq!(cuda_mem::bytes_of(g), cuda_mem::bytes_of(e), "element {i}");
    }
    let written: Vec<Sample> = Rng::new(seed ^ 0x9001).values(end - start);
    imported
        .slice_mut(start..end)
        .unwrap()
        .copy_from_host(&written)
        .unwrap();
    imported.synchronize().unwrap();
    // Importers free first (CUDA's rule for pool allocations).
    drop(imported);
    drop(pool);
    tell_parent("done");
}

// ---------------------------------------------------------------------------
// 4. The exporter exits first: Err, no hang, no leak.

const BIG: usize = 64 << 20; // u32s: 256 MiB, so a leak shows in free memory

#[test]
#[ignore = "needs a CUDA device"]
fn an_exporter_that_exits_first_gives_err_without_hang_or_leak() {
    let _serial = serial();
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let baseline = free_memory(&ctx);

    // (a) The exporter exits before the import: open is refused.
    let mut peer = Peer::spawn("child_exporter", &[(CHILD, "exporter".into())]);
    let handle_line = peer.line(LIMIT);
    let event_line = peer.line(LIMIT);
    peer.send("exit");
    peer.finish(LIMIT);
    let handle = IpcHandle::<u32>::from_bytes(&unhex(&handle_line)).unwrap();
    let event = IpcEventHandle::from_bytes(&unhex(&event_line)).unwrap();
    let t = Instant::now();
    expect_err(
        handle.open(&ctx),
        &["has exited", "keep the exporting process alive"],
        "open after the exporter exited",
    );
    expect_err(
        IpcEvent::open(&ctx, &event),
        &["has exited"],
        "open an event after its creator exited",
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    // (b) The exporter exits while the import is open: checks say so, the
    // drop closes it without hanging.
    let mut peer = Peer::spawn("child_exporter", &[(CHILD, "exporter".into())]);
    let handle = IpcHandle::<u32>::from_bytes(&unhex(&peer.line(LIMIT))).unwrap();
    let event = IpcEventHandle::from_bytes(&unhex(&peer.line(LIMIT))).unwrap();
    let imported = handle.open(&ctx).unwrap();
    let ready = IpcEvent::open(&ctx, &event).unwrap();
    ready.order_before(&imported, &stream).unwrap();
    let head = imported.slice(0..16).unwrap().to_vec().unwrap();
    assert_eq!(head, (0..16).collect::<Vec<u32>>());
    imported.check_exporter().unwrap();
    peer.send("exit");
    peer.finish(LIMIT);
    let t = Instant::now();
    expect_err(
        imported.check_exporter(),
        &["has exited"],
        "check after the exporter exited",
    );
    expect_err(
        ready.order_before(&imported, &stream),
        &["has exited"],
        "an event wait after its creator exited",
    );
    expect_err(ready.is_complete(), &["has exited"], "an event query");
    drop(ready);
    drop(imported);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

    // No leak: the device's free memory comes back (the driver may release
    // the dead exporter's memory a little later).
    let t = Instant::now();
    let slack = 32 << 20;
    loop {
        let free = free_memory(&ctx);
        if free + slack >= baseline {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "free memory {free} stays below the baseline {baseline}: the import leaked"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "a child of an_exporter_that_exits_first_gives_err_without_hang_or_leak (does nothing alone)"]
fn child_exporter() {
    if std::env::var(CHILD).as_deref() != Ok("exporter") {
        eprintln!("child_exporter runs only as the child of an_exporter_that_exits_first_gives_err_without_hang_or_leak");
        return;
    }
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut buf = DeviceBuffer::from_slice(&ctx, &(0..BIG as u32).collect::<Vec<u32>>()).unwrap();
    let ready = IpcEvent::new(&ctx).unwrap();
    ready.record_after(&buf, &stream).unwrap();
    tell_parent(&hex(&buf.export_ipc().unwrap().to_bytes()));
    tell_parent(&hex(&ready.handle().to_bytes()));
    assert_eq!(read_parent_line(), "exit");
    if cuda_mem_tests::under_sanitizer() {
        // memcheck's leak check would count the memory the driver reclaims
        // at exit; free it first (the importer sees the same thing: the
        // exporter is gone).
        drop(buf);
    }
    // Exit at once: the importer must cope.
    std::process::exit(0);
}

// ---------------------------------------------------------------------------
// 5. Shared memory is no slice parameter of a `#[kernel]` launch (issue 29,
//    class 6): a Rust kernel's slices assume that nothing else writes their
//    elements while it runs, which no borrow of this process can promise for
//    the other one.

/// The words of the refusal.
const REFUSED: [&str; 3] = ["another process", "copy_from", "unsafe fn kernel"];

/// One of the launches below, refused.
fn refused(result: cuda_mem::Result<()>, what: &str) {
    let err = expect_err(result, &REFUSED, what);
    assert!(
        matches!(err, cuda_mem::Error::InvalidArgument(_)),
        "{what}: {err:?}"
    );
}

/// The exporter's side: once exported, a buffer (and its views) is refused
/// as a `DeviceSliceMut`, `DeviceSlice` and `DeviceAtomicSlice` of safe
/// launches, and nothing runs; a copy of it in a buffer of this process is
/// launched on as before. Before the fix every launch here ran.
#[test]
#[ignore = "needs a CUDA device"]
fn exported_memory_is_no_slice_parameter_of_a_kernel() {
    let _serial = serial();
    let mut rng = Rng::from_env("exported_memory_is_no_slice_parameter_of_a_kernel");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let n = 1 + rng.below(5000);
    let config = LaunchConfig::for_num_elems(n as u32);
    let offset = rng.next_u64() >> 1;
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![0xdead_beef_u64; n]).unwrap();
    // Before the export, a launch takes it.
    write_indices
        .launch(&KERNELS, &stream, config, (&mut out, offset))
        .unwrap();
    let written: Vec<u64> = (0..n as u64).map(|i| offset + i).collect();
    let _handle = out.export_ipc().unwrap();
    refused(
        write_indices.launch(&KERNELS, &stream, config, (&mut out, 1)),
        "an exported buffer as a DeviceSliceMut",
    );
    refused(
        write_indices.launch(
            &KERNELS,
            &stream,
            config,
            (out.slice_mut(n / 2..).unwrap(), 1),
        ),
        "a view of an exported buffer as a DeviceSliceMut",
    );
    assert_eq!(out.to_vec().unwrap(), written, "a refused launch ran");

    let values: Vec<u32> = rng.values(n);
    let mut input = DeviceBuffer::from_slice(&ctx, &values).unwrap();
    let mut bins = DeviceBuffer::<u32>::zeroed(&ctx, 1 + rng.below(64)).unwrap();
    let _input_handle = input.export_ipc().unwrap();
    refused(
        histogram.launch(&KERNELS, &stream, config, (&input, &mut bins)),
        "an exported buffer as a DeviceSlice",
    );
    let mut local_input = DeviceBuffer::from_slice(&ctx, &values).unwrap();
    let _bins_handle = bins.export_ipc().unwrap();
    refused(
        histogram.launch(&KERNELS, &stream, config, (&local_input, &mut bins)),
        "an exported buffer as a DeviceAtomicSlice",
    );
    assert!(
        bins.to_vec().unwrap().iter().all(|&b| b == 0),
        "a refused launch ran"
    );

    // What stays: copies in and out, and launches on memory of this process.
    local_input.copy_from(&input).unwrap();
    let rounds = 1 + rng.below(8) as u32;
    churn
        .launch(&KERNELS, &stream, config, (&mut local_input, rounds))
        .unwrap();
    input.copy_from(&local_input).unwrap();
    let expected: Vec<u32> = values.iter().map(|&x| churned(x, rounds)).collect();
    assert_eq!(input.to_vec().unwrap(), expected);
}

/// The importer's side, in a child process: an `ImportedBuffer` (and its
/// views) is refused as every slice parameter; its data reaches a kernel
/// through a copy. The exporter's buffer keeps its values. Before the fix
/// the child's launches ran.
#[test]
#[ignore = "needs a CUDA device"]
fn imported_memory_is_no_slice_parameter_of_a_kernel() {
    let _serial = serial();
    let seed = seed_from_env("imported_memory_is_no_slice_parameter_of_a_kernel");
    let mut rng = Rng::new(seed);
    let ctx = gpu();
    let n = 1 + rng.below(100_000);
    let data: Vec<u32> = rng.values(n);
    let mut buf = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let handle = buf.export_ipc().unwrap();
    let peer = Peer::spawn(
        "child_kernels",
        &[
            (CHILD, "kernels".into()),
            ("CUDA_MEM_IPC_HANDLE", hex(&handle.to_bytes())),
            ("CUDA_MEM_IPC_SEED", seed.to_string()),
        ],
    );
    peer.finish(LIMIT);
    assert_eq!(
        buf.to_vec().unwrap(),
        data,
        "a refused launch in the child ran"
    );
}

#[test]
#[ignore = "a child of imported_memory_is_no_slice_parameter_of_a_kernel (does nothing alone)"]
fn child_kernels() {
    if std::env::var(CHILD).as_deref() != Ok("kernels") {
        eprintln!(
            "child_kernels runs only as the child of imported_memory_is_no_slice_parameter_of_a_kernel"
        );
        return;
    }
    let seed: u64 = env("CUDA_MEM_IPC_SEED").parse().unwrap();
    let mut rng = Rng::new(seed);
    let n = 1 + rng.below(100_000);
    let data: Vec<u32> = rng.values(n);
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);
    let mut imported = IpcHandle::<u32>::from_bytes(&unhex(&env("CUDA_MEM_IPC_HANDLE")))
        .unwrap()
        .open(&ctx)
        .unwrap();
    refused(
        churn.launch(&KERNELS, &stream, config, (&mut imported, 3)),
        "an ImportedBuffer as a DeviceSliceMut",
    );
    refused(
        churn.launch(
            &KERNELS,
            &stream,
            config,
            (imported.slice_mut(..n / 2 + 1).unwrap(), 3),
        ),
        "a view of an ImportedBuffer as a DeviceSliceMut",
    );
    let mut bins = DeviceBuffer::<u32>::zeroed(&ctx, 16).unwrap();
    refused(
        histogram.launch(&KERNELS, &stream, config, (&imported, &mut bins)),
        "an ImportedBuffer as a DeviceSlice",
    );
    let mut local = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
    refused(
        histogram.launch(&KERNELS, &stream, config, (&local, &mut imported)),
        "an ImportedBuffer as a DeviceAtomicSlice",
    );
    // Its data reaches a kernel through a copy.
    local.copy_from(&imported).unwrap();
    churn
        .launch(&KERNELS, &stream, config, (&mut local, 2))
        .unwrap();
    let expected: Vec<u32> = data.iter().map(|&x| churned(x, 2)).collect();
    assert_eq!(local.to_vec().unwrap(), expected);
    assert_eq!(imported.to_vec().unwrap(), data, "a refused launch ran");
    drop(imported);
    tell_parent("done");
}
