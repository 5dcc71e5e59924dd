// A derived struct is `bytemuck::Pod` with no bytemuck derive: bytemuck's
// byte views and casts work on it, and agree with cuda-mem's. A generic one
// is `Zeroable` but not `Pod` (its layout is checked per instantiation,
// which bytemuck would not do): cuda-mem's byte views serve it.
#![forbid(unsafe_code)]
#![deny(warnings)]

use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Vertex {
    position: [f32; 3],
    color: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Vec2<T> {
    x: T,
    y: T,
}

fn main() {
    let vertex = Vertex { position: [1.0, 2.0, 3.0], color: 0xFF00_FF00 };
    assert_eq!(bytemuck::bytes_of(&vertex), cm_renamed::bytes_of(&vertex));
    let vertices = [vertex, bytemuck::Zeroable::zeroed()];
    let bytes: &[u8] = bytemuck::cast_slice(&vertices);
    assert_eq!(bytes, cm_renamed::bytes_of_slice(&vertices));
    let words: &[u32] = bytemuck::cast_slice(&vertices);
    assert_eq!(words[3], 0xFF00_FF00);
    let back: Vertex = bytemuck::pod_read_unaligned(&bytes[..16]);
    assert_eq!(back, vertex);
    let points = [Vec2 { x: 1_u16, y: 2 }, Vec2 { x: 3, y: 4 }];
    assert_eq!(cm_renamed::bytes_of_slice(&points), &[1, 0, 2, 0, 3, 0, 4, 0]);
    let origin: Vec2<u16> = bytemuck::Zeroable::zeroed();
    assert_eq!(origin, Vec2 { x: 0, y: 0 });
}
