//! One process per GPU: a rank's place in the job (from the launcher's
//! environment), the exchange of the NCCL unique id between ranks, starting
//! the ranks of a one-node job ([`spawn_ranks`]), and the communicator
//! ([`communicator`]). Used by the `nccl_ranks` and `bench_ipc` examples.
//!
//! The environment, in order of preference:
//! - rank and world size: `RANK` / `WORLD_SIZE` (torchrun), else
//!   `OMPI_COMM_WORLD_RANK` / `OMPI_COMM_WORLD_SIZE` (Open MPI's mpirun),
//!   else `SLURM_PROCID` / `SLURM_NTASKS` (srun);
//! - the rank on this node and the ranks on this node: `LOCAL_RANK` /
//!   `LOCAL_WORLD_SIZE`, `OMPI_COMM_WORLD_LOCAL_RANK` /
//!   `OMPI_COMM_WORLD_LOCAL_SIZE`, `SLURM_LOCALID` / `SLURM_NTASKS_PER_NODE`
//!   (else the rank, and unknown);
//! - where the id comes from: `CUDA_MEM_NCCL_ID_FILE` (a path all ranks
//!   see, on a shared filesystem across machines: rank 0 writes the id
//!   atomically, the others wait for the file), else `MASTER_ADDR` /
//!   `MASTER_PORT` (rank 0 listens there and sends the id to every rank).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::cudarc::nccl::{Comm, Id};

/// How long a rank waits for the id (rank 0 for the others to connect).
pub const RENDEZVOUS_LIMIT: Duration = Duration::from_secs(120);

/// Tags the id on the wire and in the file, so that a stray file or
/// connection is not taken for one.
const MAGIC: &[u8; 8] = b"CMNCCLID";

/// Where the ranks get NCCL's unique id from.
///
/// ```
/// use cuda_mem_examples::ranks::IdSource;
/// let s = IdSource::File("/shared/job-42.ncclid".into());
/// assert_eq!(s.to_string(), "file /shared/job-42.ncclid");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdSource {
    /// Rank 0 writes it to this path; the others read it.
    File(PathBuf),
    /// Rank 0 listens on this host and port; the others connect.
    Tcp(String, u16),
}

impl std::fmt::Display for IdSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(p) => write!(f, "file {}", p.display()),
            Self::Tcp(host, port) => write!(f, "tcp {host}:{port}"),
        }
    }
}

/// A rank's place in the job, from the launcher's environment.
///
/// ```
/// use cuda_mem_examples::ranks::RankEnv;
/// let env = |k: &str| match k {
///     "RANK" => Some("1".to_string()),
///     "WORLD_SIZE" => Some("2".to_string()),
///     "MASTER_ADDR" => Some("10.0.0.1".to_string()),
///     "MASTER_PORT" => Some("29500".to_string()),
///     _ => None,
/// };
/// let r = RankEnv::from_vars(env).unwrap().unwrap();
/// assert_eq!((r.rank, r.world, r.local_rank), (1, 2, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankEnv {
    /// This process's rank, `0..world`.
    pub rank: usize,
    /// The number of ranks.
    pub world: usize,
    /// The rank among this node's ranks: it picks the GPU.
    pub local_rank: usize,
    /// The number of ranks on this node, when the launcher says.
    pub local_world: Option<usize>,
    /// Where the NCCL id comes from.
    pub id_source: IdSource,
}

fn first(vars: &impl Fn(&str) -> Option<String>, names: &[&str]) -> Option<(String, String)> {
    names
        .iter()
        .find_map(|n| vars(n).map(|v| (n.to_string(), v)))
}

fn number(vars: &impl Fn(&str) -> Option<String>, names: &[&str]) -> Result<Option<usize>, String> {
    match first(vars, names) {
        None => Ok(None),
        Some((name, v)) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{name}={v:?} is not a number")),
    }
}

impl RankEnv {
    /// Reads the process environment (see the module docs). `Ok(None)`
    /// when no rank is set (not started by a launcher).
    ///
    /// ```no_run
    /// if let Some(r) = cuda_mem_examples::ranks::RankEnv::from_env().unwrap() {
    ///     println!("rank {} of {}", r.rank, r.world);
    /// }
    /// ```
    pub fn from_env() -> Result<Option<Self>, String> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// [`from_env`](Self::from_env) over any variables.
    ///
    /// ```
    /// let none = cuda_mem_examples::ranks::RankEnv::from_vars(|_| None).unwrap();
    /// assert!(none.is_none());
    /// ```
    pub fn from_vars(vars: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let Some(rank) = number(&vars, &["RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"])? else {
            return Ok(None);
        };
        let world = number(
            &vars,
            &["WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"],
        )?
        .ok_or("a rank is set but no world size: set WORLD_SIZE")?;
        if world == 0 || rank >= world {
            return Err(format!(
                "rank {rank} is not a rank of a world of {world}: set RANK in 0..WORLD_SIZE"
            ));
        }
        let local_rank = number(
            &vars,
            &["LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"],
        )?
        .unwrap_or(rank);
        let local_world = number(
            &vars,
            &[
                "LOCAL_WORLD_SIZE",
                "OMPI_COMM_WORLD_LOCAL_SIZE",
                "SLURM_NTASKS_PER_NODE",
            ],
        )?;
        let id_source = if let Some(path) = vars("CUDA_MEM_NCCL_ID_FILE") {
            IdSource::File(path.into())
        } else if let Some(host) = vars("MASTER_ADDR") {
            let port = number(&vars, &["MASTER_PORT"])?
                .ok_or("MASTER_ADDR is set but MASTER_PORT is not")?;
            let port = u16::try_from(port).ok().filter(|&p| p != 0).ok_or(format!(
                "MASTER_PORT={port} is not a port rank 0 can be reached on"
            ))?;
            IdSource::Tcp(host, port)
        } else {
            return Err(
                "no source for the NCCL id: set CUDA_MEM_NCCL_ID_FILE to a path every \
                        rank sees, or MASTER_ADDR and MASTER_PORT (rank 0's address)"
                    .into(),
            );
        };
        Ok(Some(Self {
            rank,
            world,
            local_rank,
            local_world,
            id_source,
        }))
    }

    /// NCCL's unique id, the same in every rank: rank 0 makes it
    /// (`ncclGetUniqueId`) and hands it out through the id source; the
    /// others wait for it (at most [`RENDEZVOUS_LIMIT`]).
    ///
    /// ```no_run
    /// # let r: cuda_mem_examples::ranks::RankEnv = unimplemented!();
    /// let id = r.exchange_id().unwrap();
    /// ```
    pub fn exchange_id(&self) -> Result<Id, String> {
        if self.rank == 0 {
            let id = Id::new().map_err(|e| format!("ncclGetUniqueId: {e:?}"))?;
            let bytes = id_bytes(&id);
            match &self.id_source {
                IdSource::File(path) => write_atomically(path, &bytes)?,
                IdSource::Tcp(host, port) => serve_id(host, *port, self.world - 1, &bytes)?,
            }
            Ok(id)
        } else {
            let bytes = match &self.id_source {
                IdSource::File(path) => wait_for_file(path)?,
                IdSource::Tcp(host, port) => fetch_id(host, *port)?,
            };
            id_from_bytes(&bytes)
        }
    }
}

fn id_bytes(id: &Id) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend(id.internal().iter().map(|&c| c as u8));
    out
}

fn id_from_bytes(bytes: &[u8]) -> Result<Id, String> {
    if bytes.len() != MAGIC.len() + 128 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(format!(
            "the NCCL id source holds {} bytes that are not an id written by rank 0 of \
             nccl_ranks (a stale file from another job? use a fresh path per job)",
            bytes.len()
        ));
    }
    let mut internal = [0 as core::ffi::c_char; 128];
    for (d, s) in internal.iter_mut().zip(&bytes[MAGIC.len()..]) {
        *d = *s as core::ffi::c_char;
    }
    Ok(Id::uninit(internal))
}

/// Writes `bytes` to a temporary file beside `path` and renames it there,
/// so that no reader sees a partial id.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("write the NCCL id to {}: {e}", path.display()))
}

/// The most bytes read from an id source: one more than an id, so that a
/// longer source is refused as not an id without reading all of it (a path
/// like `/dev/zero`, or a peer that never stops sending).
const ID_READ_LIMIT: u64 = (MAGIC.len() + 128 + 1) as u64;

/// Reads the id file at `path`: `Ok(None)` while there is none yet, `Err`
/// for something that is not a regular file (a FIFO would block the read,
/// a device could be endless).
fn read_id_file(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Err(format!(
            "the NCCL id path {} is not a regular file: set CUDA_MEM_NCCL_ID_FILE to a fresh \
             file path every rank sees",
            path.display()
        ));
    }
    let mut bytes = Vec::new();
    match std::fs::File::open(path).and_then(|f| f.take(ID_READ_LIMIT).read_to_end(&mut bytes)) {
        Ok(_) => Ok(Some(bytes)),
        // Renamed or removed between the two calls: look again.
        Err(_) => Ok(None),
    }
}

fn wait_for_file(path: &Path) -> Result<Vec<u8>, String> {
    let start = Instant::now();
    loop {
        if let Some(bytes) = read_id_file(path)? {
            return Ok(bytes);
        }
        if start.elapsed() > RENDEZVOUS_LIMIT {
            return Err(format!(
                "rank 0 did not write the NCCL id to {} within {RENDEZVOUS_LIMIT:?}: is rank 0 \
                 running, and is the path on a filesystem every rank sees?",
                path.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn serve_id(host: &str, port: u16, peers: usize, bytes: &[u8]) -> Result<(), String> {
    let listener = TcpListener::bind((host, port))
        .or_else(|_| TcpListener::bind(("0.0.0.0", port)))
        .map_err(|e| {
            format!("rank 0 cannot listen on {host}:{port} (MASTER_ADDR:MASTER_PORT): {e}")
        })?;
    serve_id_on(listener, host, port, peers, bytes)
}

/// [`serve_id`] on a listener already bound (to `host:port`, named in the
/// errors).
fn serve_id_on(
    listener: TcpListener,
    host: &str,
    port: u16,
    peers: usize,
    bytes: &[u8],
) -> Result<(), String> {
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("listen: {e}"))?;
    let start = Instant::now();
    let mut served = 0;
    while served < peers {
        match listener.accept() {
            Ok((mut s, _)) => {
                s.set_nonblocking(false)
                    .and_then(|()| s.write_all(bytes))
                    .map_err(|e| format!("send the NCCL id: {e}"))?;
                served += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if start.elapsed() > RENDEZVOUS_LIMIT {
                    return Err(format!(
                        "only {served} of {peers} ranks fetched the NCCL id from \
                         {host}:{port} within {RENDEZVOUS_LIMIT:?}"
                    ));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
    Ok(())
}

fn fetch_id(host: &str, port: u16) -> Result<Vec<u8>, String> {
    let start = Instant::now();
    loop {
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("MASTER_ADDR {host}: {e}"))?;
        for addr in addrs {
            if let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                let mut bytes = Vec::new();
                s.set_read_timeout(Some(RENDEZVOUS_LIMIT))
                    .and_then(|()| (&mut s).take(ID_READ_LIMIT).read_to_end(&mut bytes))
                    .map_err(|e| format!("read the NCCL id from {addr}: {e}"))?;
                return Ok(bytes);
            }
        }
        if start.elapsed() > RENDEZVOUS_LIMIT {
            return Err(format!(
                "could not reach rank 0 at {host}:{port} within {RENDEZVOUS_LIMIT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The GPU of a rank: its local rank modulo the device count, after
/// refusing more ranks on this node than GPUs, which NCCL cannot run
/// (unless `allow_shared_gpu`, to see NCCL's own answer).
///
/// ```no_run
/// # let r: cuda_mem_examples::ranks::RankEnv = unimplemented!();
/// let ordinal = cuda_mem_examples::ranks::gpu_of(&r, false).unwrap();
/// ```
pub fn gpu_of(env: &RankEnv, allow_shared_gpu: bool) -> Result<usize, String> {
    let gpus = cuda_mem::device_count().map_err(|e| e.to_string())?;
    if gpus == 0 {
        return Err("no CUDA device".into());
    }
    let local = env.local_world.unwrap_or(env.local_rank + 1);
    if local > gpus && !allow_shared_gpu {
        return Err(shared_gpu_message(local, gpus));
    }
    Ok(env.local_rank % gpus)
}

/// Why `local` ranks cannot run on `gpus` GPUs, and what to do.
///
/// ```
/// let m = cuda_mem_examples::ranks::shared_gpu_message(2, 1);
/// assert!(m.contains("Duplicate GPU detected") && m.contains("--ranks 1"));
/// ```
pub fn shared_gpu_message(local: usize, gpus: usize) -> String {
    format!(
        "{local} ranks on this node but {gpus} GPU(s): NCCL refuses two ranks of one \
         communicator on one GPU (ncclCommInitRank returns ncclInvalidUsage, \"Duplicate GPU \
         detected\"); start at most {gpus} rank(s) per node (--ranks {gpus}), or use the \
         threaded example nccl_allreduce; --allow-shared-gpu tries anyway"
    )
}

/// The communicator of this rank on GPU `ordinal` (`ncclCommInitRank`),
/// with the device bound to the thread, as NCCL needs. A refusal because
/// two ranks share a GPU is reported as such.
///
/// ```no_run
/// # let r: cuda_mem_examples::ranks::RankEnv = unimplemented!();
/// let id = r.exchange_id().unwrap();
/// let (ctx, comm) = cuda_mem_examples::ranks::communicator(&r, 0, id).unwrap();
/// ```
pub fn communicator(
    env: &RankEnv,
    ordinal: usize,
    id: Id,
) -> Result<(Arc<cuda_mem::CudaContext>, Comm), String> {
    let ctx = cuda_mem::context(ordinal).map_err(|e| e.to_string())?;
    ctx.bind_to_thread().map_err(|e| format!("{e:?}"))?;
    let stream = ctx.new_stream().map_err(|e| format!("{e:?}"))?;
    match Comm::from_rank(stream, env.rank, env.world, id) {
        Ok(comm) => Ok((ctx, comm)),
        Err(e) => {
            let gpus = cuda_mem::device_count().unwrap_or(0);
            let local = env.local_world.unwrap_or(env.world);
            if e.0 == cuda_mem::cudarc::nccl::sys::ncclResult_t::ncclInvalidUsage && local > gpus {
                Err(format!(
                    "ncclCommInitRank refused (ncclInvalidUsage): {}",
                    shared_gpu_message(local, gpus)
                ))
            } else {
                Err(format!(
                    "ncclCommInitRank: {:?}; NCCL_DEBUG=WARN says more",
                    e.0
                ))
            }
        }
    }
}

/// Starts ranks `1..n` of a one-node job as children running this program
/// with `args`, with `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`
/// and the id source in their environment; this process is rank 0 (its
/// [`RankEnv`] is returned). The id goes through a fresh file in the
/// temporary directory, or over TCP on `127.0.0.1` when `tcp_port` is set.
///
/// ```no_run
/// let (me, children) = cuda_mem_examples::ranks::spawn_ranks(2, &["--bins", "1000"], None).unwrap();
/// ```
pub fn spawn_ranks(
    n: usize,
    args: &[&str],
    tcp_port: Option<u16>,
) -> Result<(RankEnv, Vec<Child>), String> {
    if n == 0 {
        return Err("--ranks needs at least 1".into());
    }
    if tcp_port == Some(0) {
        // The other ranks could not know which port the system picked.
        return Err("--tcp 0: pick a free port in 1..=65535".into());
    }
    let id_source = match tcp_port {
        Some(port) => IdSource::Tcp("127.0.0.1".into(), port),
        None => {
            let path = std::env::temp_dir().join(format!(
                "cuda-mem-nccl-{}-{}.id",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ));
            IdSource::File(path)
        }
    };
    let exe = std::env::current_exe().map_err(|e| format!("the path of this program: {e}"))?;
    let mut children = Vec::new();
    for rank in 1..n {
        let mut cmd = Command::new(&exe);
        cmd.args(args)
            .env("RANK", rank.to_string())
            .env("WORLD_SIZE", n.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("LOCAL_WORLD_SIZE", n.to_string());
        match &id_source {
            IdSource::File(p) => {
                cmd.env("CUDA_MEM_NCCL_ID_FILE", p)
                    .env_remove("MASTER_ADDR");
            }
            IdSource::Tcp(host, port) => {
                cmd.env_remove("CUDA_MEM_NCCL_ID_FILE")
                    .env("MASTER_ADDR", host)
                    .env("MASTER_PORT", port.to_string());
            }
        }
        match cmd.spawn() {
            Ok(c) => children.push(c),
            Err(e) => {
                kill_all(&mut children);
                return Err(format!("start rank {rank}: {e}"));
            }
        }
    }
    Ok((
        RankEnv {
            rank: 0,
            world: n,
            local_rank: 0,
            local_world: Some(n),
            id_source,
        },
        children,
    ))
}

/// Kills (and reaps) every child.
///
/// ```
/// cuda_mem_examples::ranks::kill_all(&mut Vec::new());
/// ```
pub fn kill_all(children: &mut Vec<Child>) {
    for mut c in children.drain(..) {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// Waits (at most `limit` in all) for every child; `Err` naming the ranks
/// that failed or did not finish (those are killed).
///
/// ```no_run
/// let (_, children) = cuda_mem_examples::ranks::spawn_ranks(2, &[], None).unwrap();
/// cuda_mem_examples::ranks::wait_all(children, std::time::Duration::from_secs(60)).unwrap();
/// ```
pub fn wait_all(mut children: Vec<Child>, limit: Duration) -> Result<(), String> {
    let start = Instant::now();
    let mut failed = Vec::new();
    for (i, c) in children.iter_mut().enumerate() {
        let rank = i + 1;
        loop {
            match c.try_wait() {
                Ok(Some(status)) => {
                    if !status.success() {
                        failed.push(format!("rank {rank} exited with {status}"));
                    }
                    break;
                }
                Ok(None) if start.elapsed() < limit => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Ok(None) => {
                    let _ = c.kill();
                    let _ = c.wait();
                    failed.push(format!("rank {rank} did not finish within {limit:?}"));
                    break;
                }
                Err(e) => {
                    failed.push(format!("rank {rank}: {e}"));
                    break;
                }
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// Removes the id file of a finished job (rank 0, after every rank has
/// the id).
///
/// ```no_run
/// # let r: cuda_mem_examples::ranks::RankEnv = unimplemented!();
/// cuda_mem_examples::ranks::clean_up(&r);
/// ```
pub fn clean_up(env: &RankEnv) {
    if let (0, IdSource::File(path)) = (env.rank, &env.id_source) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn launchers_environments_are_read() {
        let mpi = [
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
            ("CUDA_MEM_NCCL_ID_FILE", "/shared/id"),
        ];
        let r = RankEnv::from_vars(vars(&mpi)).unwrap().unwrap();
        assert_eq!(
            r,
            RankEnv {
                rank: 3,
                world: 4,
                local_rank: 1,
                local_world: Some(2),
                id_source: IdSource::File("/shared/id".into())
            }
        );
        let slurm = [
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_LOCALID", "1"),
            ("MASTER_ADDR", "node1"),
            ("MASTER_PORT", "29500"),
        ];
        let r = RankEnv::from_vars(vars(&slurm)).unwrap().unwrap();
        assert_eq!((r.rank, r.world, r.local_rank), (5, 8, 1));
        assert_eq!(r.id_source, IdSource::Tcp("node1".into(), 29500));
    }

    #[test]
    fn bad_environments_say_what_to_set() {
        let cases: [(&[(&str, &str)], &str); 8] = [
            (&[("RANK", "0")], "WORLD_SIZE"),
            (&[("RANK", "0"), ("WORLD_SIZE", "0")], "0..WORLD_SIZE"),
            (
                &[
                    ("RANK", "1"),
                    ("WORLD_SIZE", "2"),
                    ("MASTER_ADDR", "h"),
                    ("MASTER_PORT", "0"),
                ],
                "MASTER_PORT=0 is not a port",
            ),
            (
                &[
                    ("RANK", "1"),
                    ("WORLD_SIZE", "2"),
                    ("MASTER_ADDR", "h"),
                    ("MASTER_PORT", "65536"),
                ],
                "MASTER_PORT=65536 is not a port",
            ),
            (&[("RANK", "2"), ("WORLD_SIZE", "2")], "0..WORLD_SIZE"),
            (&[("RANK", "x"), ("WORLD_SIZE", "2")], "not a number"),
            (
                &[("RANK", "0"), ("WORLD_SIZE", "2")],
                "CUDA_MEM_NCCL_ID_FILE",
            ),
            (
                &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h")],
                "MASTER_PORT",
            ),
        ];
        for (env, needle) in cases {
            let e = RankEnv::from_vars(vars(env)).unwrap_err();
            assert!(e.contains(needle), "{env:?}: {e}");
        }
        // Port 0 would leave rank 0 listening where no other rank can look.
        let e = spawn_ranks(2, &[], Some(0)).unwrap_err();
        assert!(e.contains("--tcp 0"), "{e}");
        assert!(spawn_ranks(0, &[], None).is_err());
    }

    #[test]
    fn ids_travel_through_a_file_and_stale_files_are_refused() {
        let path = std::env::temp_dir().join(format!("cuda-mem-ranks-test-{}", std::process::id()));
        let mut bytes = MAGIC.to_vec();
        bytes.extend((0..128).map(|i| i as u8));
        write_atomically(&path, &bytes).unwrap();
        let read = wait_for_file(&path).unwrap();
        assert_eq!(read, bytes);
        let id = id_from_bytes(&read).unwrap();
        assert_eq!(id_bytes(&id), bytes);
        std::fs::write(&path, b"old junk").unwrap();
        assert!(id_from_bytes(&std::fs::read(&path).unwrap())
            .unwrap_err()
            .contains("fresh path"));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn endless_or_blocking_id_sources_are_refused_not_waited_on() {
        // A device that never ends: bounded read, refused as not an id.
        let e = read_id_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        // A FIFO nobody writes: opening it would block forever.
        let fifo = std::env::temp_dir().join(format!("cuda-mem-id-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let e = wait_for_file(&fifo).unwrap_err();
        std::fs::remove_file(&fifo).unwrap();
        assert!(e.contains("not a regular file"), "{e}");
        // A long regular file is read only as far as tells it is no id.
        let long = std::env::temp_dir().join(format!("cuda-mem-id-long-{}", std::process::id()));
        std::fs::write(&long, vec![b'x'; 1 << 20]).unwrap();
        let read = wait_for_file(&long).unwrap();
        std::fs::remove_file(&long).unwrap();
        assert_eq!(read.len() as u64, ID_READ_LIMIT);
        assert!(id_from_bytes(&read).is_err());
    }

    #[test]
    fn a_peer_that_never_stops_sending_is_read_only_as_far_as_an_id() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            // Until the reader hangs up.
            while s.write_all(&[0xab; 4096]).is_ok() {}
        });
        let got = fetch_id("127.0.0.1", port).unwrap();
        assert_eq!(got.len() as u64, ID_READ_LIMIT);
        assert!(id_from_bytes(&got).is_err());
        server.join().unwrap();
    }

    /// The server keeps the listener it was handed: a port found by binding
    /// and dropping a listener could be taken by another test's listener
    /// before the server bound it again, and a read from that one was reset
    /// (seen once in CI: "Connection reset by peer").
    #[test]
    fn ids_travel_over_tcp() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut bytes = MAGIC.to_vec();
        bytes.extend((0..128).map(|i| (255 - i) as u8));
        let sent = bytes.clone();
        let server = std::thread::spawn(move || serve_id_on(listener, "127.0.0.1", port, 2, &sent));
        let a = fetch_id("127.0.0.1", port).unwrap();
        let b = fetch_id("127.0.0.1", port).unwrap();
        server.join().unwrap().unwrap();
        assert_eq!(a, bytes);
        assert_eq!(b, bytes);
    }
}
