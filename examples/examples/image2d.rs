//! Image2d: an RGB image of 12-byte pixels in pitched device memory
//! (`PitchedBuffer`), filled whole and by region, copied to and from the host
//! in 2D, and never showing its row padding.
//!
//!     cargo run --release --example image2d
//!
//! `cuMemAllocPitch` pads each row so that rows start aligned; the pitch
//! (bytes from one row to the next) is then not a multiple of the 12-byte
//! pixel. `PitchedBuffer` hides that: host data is always tightly packed
//! (`width * height` pixels, row after row), rows are views of `width`
//! pixels, and fills, memsets and copies touch the pixels only.
//!
//! The example sets every byte of the allocation, padding included, to a
//! poison value first (with `raw_memset_padded`, a hidden test helper that
//! is not part of the supported API), and checks after the operations that
//! the padding still holds it, besides checking every pixel:
//!
//! 1. `fill` of the whole image, then `region_mut(x0..x1, y0..y1)?.fill(..)`
//!    for a rectangle (one 2D fill of a region), and a row through a row view;
//! 2. a synchronous 2D upload (`copy_from_host`) and download (`to_vec`) of
//!    a picture whose pixels are all different, and each row on its own;
//! 3. asynchronous 2D copies through a `PinnedBuffer` on a stream, and a
//!    device-to-device 2D copy between two pitched images;
//! 4. region copies: a tile of the image into a packed `DeviceBuffer`, into
//!    another place of the other image (region to region), and out into a
//!    host frame whose rows are wider than the tile's (`copy_to_host_2d`).
//!
//! The operations come from the traits every buffer shares, `Memory` and
//! `MemoryMut` (`use cuda_mem::prelude::*;`).

use cuda_mem::prelude::*;
use std::error::Error;
use std::ops::Range;

use cuda_mem::{DeviceBuffer, DeviceCopy, PinnedBuffer, PitchedBuffer};
use cuda_mem_examples::{gpu_or_exit, Checks};

/// A pixel of three `f32` channels: 12 bytes, alignment 4, no padding.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Rgb32 {
    r: f32,
    g: f32,
    b: f32,
}

const WIDTH: usize = 1000;
const HEIGHT: usize = 600;
/// The byte every padding byte is set to, and must still hold at the end.
const POISON: u8 = 0xa5;
const BACKGROUND: Rgb32 = Rgb32 {
    r: 0.1,
    g: 0.2,
    b: 0.3,
};
const ORANGE: Rgb32 = Rgb32 {
    r: 1.0,
    g: 0.5,
    b: 0.0,
};
/// The rectangle filled with `ORANGE`: columns and rows. Its edges do not
/// fall on 16-byte boundaries.
const RECT_X: Range<usize> = 333..777;
const RECT_Y: Range<usize> = 100..350;
/// The row filled with `ORANGE` through a row view, below the rectangle.
const STRIPE_Y: usize = 420;
/// Where step 4 puts the tile `RECT_X` x `RECT_Y` in the other image.
const DEST_X: usize = 17;
const DEST_Y: usize = 301;
/// Elements from one row of the host frame of step 4 to the next.
const FRAME_PITCH: usize = 509;

/// A picture in which every pixel differs from every other (`b` is the pixel
/// index, exact in `f32`), so a row shifted by padding could not go unnoticed.
fn picture() -> Vec<Rgb32> {
    (0..HEIGHT)
        .flat_map(|y| {
            (0..WIDTH).map(move |x| Rgb32 {
                r: x as f32 / WIDTH as f32,
                g: y as f32 / HEIGHT as f32,
                b: (y * WIDTH + x) as f32,
            })
        })
        .collect()
}

/// Number of pixels of `pixels` (tightly packed) that differ from `expected(x, y)`.
fn wrong_pixels(pixels: &[Rgb32], expected: impl Fn(usize, usize) -> Rgb32) -> usize {
    pixels
        .iter()
        .enumerate()
        .filter(|&(i, p)| *p != expected(i % WIDTH, i / WIDTH))
        .count()
}

/// Number of padding bytes (after each row's pixels, before the next row)
/// that no longer hold [`POISON`].
fn touched_padding(image: &PitchedBuffer<Rgb32>) -> cuda_mem::Result<usize> {
    let bytes = image.raw_padded_bytes()?;
    let row_bytes = image.width() * size_of::<Rgb32>();
    Ok(bytes
        .chunks(image.pitch())
        .map(|row| row[row_bytes..].iter().filter(|&&b| b != POISON).count())
        .sum())
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("image2d");
    println!("device: {}", ctx.name()?);
    let mut checks = Checks::new("image2d");

    let mut image = PitchedBuffer::<Rgb32>::new(&ctx, WIDTH, HEIGHT)?;
    let row_bytes = WIDTH * size_of::<Rgb32>();
    println!(
        "{WIDTH}x{HEIGHT} pixels of {} bytes: rows of {row_bytes} bytes, pitch {} bytes ({} bytes of padding per row, {:.2} pixels)",
        size_of::<Rgb32>(),
        image.pitch(),
        image.pitch() - row_bytes,
        image.pitch() as f64 / size_of::<Rgb32>() as f64,
    );
    image.raw_memset_padded(POISON)?;

    // 1. A fill of the whole image, then of a rectangle (one 2D fill of a
    //    region), then of one row through a row view.
    image.fill(BACKGROUND)?;
    image.region_mut(RECT_X, RECT_Y)?.fill(ORANGE)?;
    image.row_mut(STRIPE_Y)?.fill(ORANGE)?;
    let filled = image.to_vec()?;
    checks.check(
        filled.len() == WIDTH * HEIGHT,
        format_args!(
            "to_vec gives {} pixels, width x height, no padding",
            filled.len()
        ),
    );
    let wrong = wrong_pixels(&filled, |x, y| {
        if (RECT_X.contains(&x) && RECT_Y.contains(&y)) || y == STRIPE_Y {
            ORANGE
        } else {
            BACKGROUND
        }
    });
    checks.check(
        wrong == 0,
        format_args!(
            "fill, then a {}x{} region and a row: every pixel right ({wrong} wrong)",
            RECT_X.len(),
            RECT_Y.len()
        ),
    );
    let touched = touched_padding(&image)?;
    checks.check(
        touched == 0,
        format_args!("the fills left the row padding alone ({touched} bytes changed)"),
    );

    // 2. Synchronous 2D copies of a picture with all pixels different.
    let picture = picture();
    image.copy_from_host(&picture)?;
    let back = image.to_vec()?;
    checks.check(
        back == picture,
        "copy_from_host then to_vec: the picture comes back unchanged",
    );
    let mut wrong_rows = 0;
    for y in 0..HEIGHT {
        let row = image.row(y)?;
        if row.len() != WIDTH || row.to_vec()? != picture[y * WIDTH..(y + 1) * WIDTH] {
            wrong_rows += 1;
        }
    }
    checks.check(
        wrong_rows == 0,
        format_args!(
            "each row view holds exactly that row's {WIDTH} pixels ({wrong_rows} wrong rows)"
        ),
    );

    // 3. Asynchronous 2D copies through pinned memory, and a device-to-device copy.
    let stream = ctx.new_stream()?;
    let mut pinned = PinnedBuffer::<Rgb32>::new(&ctx, WIDTH * HEIGHT)?;
    image.copy_to_host_async(&mut pinned, &stream)?;
    checks.check(
        pinned.as_slice()? == picture.as_slice(), // as_slice waits for the copy
        "copy_to_host_async into a PinnedBuffer: the picture, tightly packed",
    );
    let mirrored = |x: usize, y: usize| picture[y * WIDTH + (WIDTH - 1 - x)];
    for (i, pixel) in pinned.as_mut_slice()?.iter_mut().enumerate() {
        *pixel = mirrored(i % WIDTH, i / WIDTH);
    }
    let mut staging = PitchedBuffer::<Rgb32>::new(&ctx, WIDTH, HEIGHT)?;
    staging.raw_memset_padded(POISON)?;
    staging.copy_from_host_async(&pinned, &stream)?;
    image.copy_from_async(&staging, &stream)?;
    let wrong = wrong_pixels(&image.to_vec()?, mirrored);
    checks.check(
        wrong == 0,
        format_args!("copy_from_host_async, then a device-to-device 2D copy: the mirrored picture ({wrong} wrong)"),
    );

    // 4. Region copies: the tile RECT_X x RECT_Y of the (mirrored) image into
    //    a packed DeviceBuffer, into another place of `staging`, and out into
    //    a host frame of FRAME_PITCH-pixel rows.
    let (tile_w, tile_h) = (RECT_X.len(), RECT_Y.len());
    let tile = image.region(RECT_X, RECT_Y)?;
    let tile_pixel = |x: usize, y: usize| mirrored(RECT_X.start + x, RECT_Y.start + y);
    let mut packed = DeviceBuffer::<Rgb32>::new(&ctx, tile_w * tile_h)?;
    packed.copy_from(&tile)?;
    let wrong = packed
        .to_vec()?
        .iter()
        .enumerate()
        .filter(|&(i, p)| *p != tile_pixel(i % tile_w, i / tile_w))
        .count();
    checks.check(
        wrong == 0,
        format_args!(
            "a {tile_w}x{tile_h} region into a packed DeviceBuffer, row after row ({wrong} wrong)"
        ),
    );
    staging.fill(BACKGROUND)?;
    staging
        .region_mut(DEST_X..DEST_X + tile_w, DEST_Y..DEST_Y + tile_h)?
        .copy_from(&tile)?;
    let wrong = wrong_pixels(&staging.to_vec()?, |x, y| {
        if (DEST_X..DEST_X + tile_w).contains(&x) && (DEST_Y..DEST_Y + tile_h).contains(&y) {
            tile_pixel(x - DEST_X, y - DEST_Y)
        } else {
            BACKGROUND
        }
    });
    checks.check(
        wrong == 0,
        format_args!("region to region at ({DEST_X}, {DEST_Y}) of the other image, nothing else changed ({wrong} wrong)"),
    );
    let mut frame = vec![BACKGROUND; (tile_h - 1) * FRAME_PITCH + tile_w];
    tile.copy_to_host_2d(&mut frame, FRAME_PITCH)?;
    let wrong = frame
        .iter()
        .enumerate()
        .filter(|&(i, p)| {
            let (x, y) = (i % FRAME_PITCH, i / FRAME_PITCH);
            *p != if x < tile_w {
                tile_pixel(x, y)
            } else {
                BACKGROUND
            }
        })
        .count();
    checks.check(
        wrong == 0,
        format_args!("the region out into a host frame of {FRAME_PITCH}-pixel rows, the rest of each frame row untouched ({wrong} wrong)"),
    );

    let touched = touched_padding(&image)? + touched_padding(&staging)?;
    checks.check(
        touched == 0,
        format_args!(
            "no fill or copy wrote into the row padding of either image ({touched} bytes changed)"
        ),
    );
    checks.finish();
    Ok(())
}
