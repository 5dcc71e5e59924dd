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
    let mut control = vec![0u8; space];
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
    // SAFETY: `msg` points to a control buffer of CMSG_SPACE(sizeof(int))
    // bytes, so the first header and its data fit; `iov` is valid for
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
/// (close-on-exec). `Err` when the message carried no descriptor or the
/// peer closed the socket.
///
/// ```no_run
/// # fn f(sock: &std::os::unix::net::UnixStream) -> std::io::Result<()> {
/// let mut tag = [0u8; 4];
/// let (n, fd) = cuda_mem::ipc::recv_fd(sock, &mut tag)?;
/// # Ok(()) }
/// ```
pub fn recv_fd(socket: &UnixStream, buf: &mut [u8]) -> io::Result<(usize, OwnedFd)> {
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) } as usize;
    let mut control = vec![0u8; space];
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
    // SAFETY: `msg` describes `buf` and a control buffer of the right size,
    // both valid for writes for the duration of the call.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "recv_fd: the peer closed the socket",
        ));
    }
    // SAFETY: `msg` was filled in by recvmsg; CMSG_FIRSTHDR checks the length.
    let cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    // SAFETY: a non-null `cmsg` points into `control`, inside msg_controllen.
    let fd = (!cmsg.is_null()
        && unsafe {
            (*cmsg).cmsg_level == libc::SOL_SOCKET
                && (*cmsg).cmsg_type == libc::SCM_RIGHTS
                && (*cmsg).cmsg_len as usize
                    >= libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as usize
        })
    .then(|| {
        // SAFETY: an SCM_RIGHTS header with room for one int, checked above.
        unsafe { libc::CMSG_DATA(cmsg).cast::<libc::c_int>().read_unaligned() }
    });
    match fd {
        // SAFETY: the kernel installed this descriptor for us; nobody else owns it.
        Some(fd) if fd >= 0 => Ok((n as usize, unsafe { OwnedFd::from_raw_fd(fd) })),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "recv_fd: the message carried no file descriptor (was it sent with send_fd?)",
        )),
    }
}

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
    }
}
