//! The peer rows: copies between two devices (or two contexts of one
//! device), with peer access and, where it can be disabled, through the host.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::{CudaContext, DeviceBuffer};

use crate::harness::Bench;

/// Peer-copy bandwidth, 256 MiB each way, against `cuMemcpyPeerAsync` on the
/// same stream: between device 0 and device 1, or (on one GPU) between two
/// contexts of device 0. Then the same with peer access disabled, where both
/// go through the host.
pub fn peer_copies(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let devices = cuda_mem::device_count().unwrap();
    let (other, label) = if devices > 1 {
        (cuda_mem::context(1).unwrap(), "GPU0->GPU1")
    } else {
        (
            cuda_mem::CudaContext::new_non_primary(0, 0).unwrap(),
            "ctx0->ctx0' (1 GPU)",
        )
    };
    let len = 256 << 20;
    let mut here = DeviceBuffer::<u8>::new(ctx, len).unwrap();
    here.fill(0x5a).unwrap();
    let mut there = DeviceBuffer::<u8>::zeroed(&other, len).unwrap();
    let (h, t) = (here.as_device_ptr().addr(), there.as_device_ptr().addr());
    let (hc, tc) = (ctx.cu_ctx(), other.cu_ctx());
    let s = b.stream.clone();
    let path = cuda_mem::enable_peer_access(ctx, &other).unwrap();
    for disabled in [false, true] {
        if disabled {
            if devices < 2 {
                break; // one device: nothing to disable
            }
            cuda_mem::disable_peer_access(ctx, &other).unwrap();
        }
        let path = if disabled {
            cuda_mem::peer_path(ctx, &other).unwrap()
        } else {
            path
        };
        for back in [false, true] {
            let (dst, src) = if back {
                ((h, hc), (t, tc))
            } else {
                ((t, tc), (h, hc))
            };
            let (ours, raw) = b.gpu_pair_ms(
                || {
                    if back {
                        here.copy_from_async(&there, &s).unwrap()
                    } else {
                        there.copy_from_async(&here, &s).unwrap()
                    }
                },
                // SAFETY: two live allocations of `len` bytes, on the same stream.
                || unsafe {
                    sys::cuMemcpyPeerAsync(dst.0, dst.1, src.0, src.1, len, s.cu_stream())
                        .result()
                        .unwrap()
                },
            );
            b.push(
                "peer",
                format!(
                    "{label}{} 256 MiB, {path:?}",
                    if back { " back" } else { "" }
                ),
                "GB/s",
                len as f64 / ours / 1e6,
                len as f64 / raw / 1e6,
                "cuMemcpyPeerAsync",
                true,
                None,
            );
        }
    }
    cuda_mem::enable_peer_access(ctx, &other).unwrap();
    assert!(
        there.to_vec().unwrap().iter().all(|&x| x == 0x5a),
        "peer copy result wrong"
    );
}
