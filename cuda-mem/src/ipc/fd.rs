//! [`send_fd`] / [`recv_fd`]: a file descriptor (a shareable pool's) over a
//! Unix socket (`SCM_RIGHTS`).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// Sends `bytes` and the file descriptor `fd` over a Unix socket in one
/// message (`SCM_RIGHTS`): how a pool's descriptor
/// ([`MemPool::export_fd`](crate::MemPool::export_fd)) reaches another process. `bytes` must not be
/// empty (a message needs at least one byte).
///
/// ```no_run
/// use std::os::fd::AsFd;
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let file = std::fs::File::open("/dev/null").unwrap();
/// cuda_mem::ipc::send_fd(&a, file.as_fd(), b"hello").unwrap();
/// let (n, fd) = cuda_mem::ipc::recv_fd(&b, &mut [0u8; 5]).unwrap();
/// assert_eq!(n, 5);
/// ```
pub fn send_fd(socket: &UnixStream, fd: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<()> {
    if bytes.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "send_fd needs at least one byte of data to carry the descriptor",
        ));
    }
    let raw = fd.as_raw_fd();
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) } as usize;
    // u64s: the kernel and CMSG_FIRSTHDR expect a control buffer aligned
    // for `cmsghdr`, whose fields are written through the header pointer.
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: all-zero is a valid msghdr; the fields that matter are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: `msg` points to an 8-byte aligned control buffer of
    // CMSG_SPACE(sizeof(int)) bytes, so the first header and its data fit; `iov` is valid for
    // `bytes.len()` bytes, which sendmsg only reads.
    let sent = unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
        libc::CMSG_DATA(cmsg)
            .cast::<libc::c_int>()
            .write_unaligned(raw);
        libc::sendmsg(socket.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    if (sent as usize) < bytes.len() {
        return Err(io::Error::new(
            io::ErrorKind::WriteZero,
            "send_fd: the socket took only part of the data",
        ));
    }
    Ok(())
}

/// Receives a message sent by [`send_fd`]: up to `buf.len()` bytes and the
/// file descriptor. Returns the number of bytes read and the descriptor
/// (close-on-exec). `Err` when `buf` is empty, when the message carried no
/// descriptor or more than one (every descriptor received is closed again),
/// or the peer closed the socket.
///
/// ```no_run
/// # fn f(sock: &std::os::unix::net::UnixStream) -> std::io::Result<()> {
/// let mut tag = [0u8; 4];
/// let (n, fd) = cuda_mem::ipc::recv_fd(sock, &mut tag)?;
/// # Ok(()) }
/// ```
pub fn recv_fd(socket: &UnixStream, buf: &mut [u8]) -> io::Result<(usize, OwnedFd)> {
    if buf.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "recv_fd needs room for at least one byte of data (the descriptor travels with it)",
        ));
    }
    // Room for more descriptors than `send_fd` sends, so that a peer that
    // sends several has each of them received here, and closed.
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE((MAX_FDS * size_of::<libc::c_int>()) as u32) } as usize;
    // u64s: aligned for the `cmsghdr`s read through header pointers below.
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: all-zero is a valid msghdr; the fields that matter are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: `msg` describes `buf` and a control buffer of `space` bytes,
    // both valid for writes for the duration of the call.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // Take ownership of every descriptor the kernel installed, before any
    // check can return: whatever is refused below is closed, not leaked.
    let mut fds = Vec::new();
    // SAFETY: `msg` was filled in by recvmsg; CMSG_FIRSTHDR and CMSG_NXTHDR
    // only return headers inside msg_controllen.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    while !cmsg.is_null() {
        // SAFETY: a non-null `cmsg` points to a header inside `control`.
        let (level, kind, len) = unsafe {
            (
                (*cmsg).cmsg_level,
                (*cmsg).cmsg_type,
                (*cmsg).cmsg_len as usize,
            )
        };
        if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
            // SAFETY: CMSG_LEN only computes a size.
            let header = unsafe { libc::CMSG_LEN(0) } as usize;
            let count = len.saturating_sub(header) / size_of::<libc::c_int>();
            for i in 0..count {
                // SAFETY: the kernel wrote `count` ints after the header,
                // inside the control buffer (it truncates rather than overrun).
                let fd = unsafe {
                    libc::CMSG_DATA(cmsg)
                        .cast::<libc::c_int>()
                        .add(i)
                        .read_unaligned()
                };
                if fd >= 0 {
                    // SAFETY: the kernel installed this descriptor for us;
                    // nobody else owns it.
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        // SAFETY: `cmsg` is a header of `msg`.
        cmsg = unsafe { libc::CMSG_NXTHDR(&msg, cmsg) };
    }
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "recv_fd: the peer closed the socket",
        ));
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 || fds.len() > 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "recv_fd: the message carried more than one file descriptor (send_fd sends one); \
             all were closed",
        ));
    }
    match fds.pop() {
        Some(fd) => Ok((n as usize, fd)),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "recv_fd: the message carried no file descriptor (was it sent with send_fd?)",
        )),
    }
}

/// How many descriptors one [`recv_fd`] has room for (and closes, beyond
/// the first).
const MAX_FDS: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_travels_over_a_socket() {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsFd;
        let (a, b) = UnixStream::pair().unwrap();
        let path = std::env::temp_dir().join(format!("cuda-mem-fd-{}", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        send_fd(&a, file.as_fd(), b"pool").unwrap();
        let mut tag = [0u8; 8];
        let (n, fd) = recv_fd(&b, &mut tag).unwrap();
        assert_eq!(&tag[..n], b"pool");
        // The received descriptor is the same open file.
        file.write_all(b"xyz").unwrap();
        let mut same = std::fs::File::from(fd);
        same.rewind().unwrap();
        let mut text = String::new();
        same.read_to_string(&mut text).unwrap();
        assert_eq!(text, "xyz");
        assert!(send_fd(&a, file.as_fd(), b"").is_err());
        // A message without a descriptor is refused.
        (&a).write_all(b"no fd").unwrap();
        assert!(recv_fd(&b, &mut tag).is_err());
        // No room for data: refused, not mistaken for a closed socket.
        assert_eq!(
            recv_fd(&b, &mut []).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    /// Sends `fds` in one SCM_RIGHTS message with one byte of data.
    fn send_fds(socket: &UnixStream, fds: &[libc::c_int]) {
        let data = [7u8];
        // SAFETY: CMSG_SPACE only computes a size.
        let space = unsafe { libc::CMSG_SPACE(size_of_val(fds) as u32) } as usize;
        let mut control = vec![0u64; space.div_ceil(8)];
        let mut iov = libc::iovec {
            iov_base: data.as_ptr() as *mut libc::c_void,
            iov_len: 1,
        };
        // SAFETY: as in `send_fd`, with room for `fds.len()` descriptors.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = space as _;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(size_of_val(fds) as u32) as _;
            for (i, fd) in fds.iter().enumerate() {
                libc::CMSG_DATA(cmsg)
                    .cast::<libc::c_int>()
                    .add(i)
                    .write_unaligned(*fd);
            }
            assert_eq!(libc::sendmsg(socket.as_raw_fd(), &msg, 0), 1);
        }
    }

    #[test]
    fn several_descriptors_are_refused_and_every_one_is_closed() {
        use std::io::Read;
        for count in [2, 3, 20] {
            let (a, b) = UnixStream::pair().unwrap();
            let mut ends = [0; 2];
            // SAFETY: a valid out-array of two ints.
            let r = unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) };
            assert_eq!(r, 0);
            // SAFETY: pipe2 returned two new descriptors that we now own.
            let (read, write) =
                unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
            send_fds(&a, &vec![write.as_raw_fd(); count]);
            drop(write);
            let e = recv_fd(&b, &mut [0u8; 4]).unwrap_err();
            assert_eq!(
                e.kind(),
                io::ErrorKind::InvalidData,
                "{count} descriptors: {e}"
            );
            // Every copy of the write end is closed again: the read end sees
            // the end of the pipe instead of blocking.
            let mut read = std::fs::File::from(read);
            // SAFETY: sets a flag on a descriptor we own.
            let r = unsafe { libc::fcntl(read.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
            assert_eq!(r, 0);
            let got = read.read(&mut [0u8; 1]).map_err(|e| e.kind());
            assert_eq!(
                got,
                Ok(0),
                "{count} descriptors: a received copy leaked ({got:?})"
            );
        }
    }
}
