// The CUDA C++ twins of the parity benchmark's Rust kernels
// (examples/parity-kernels/src/lib.rs): the same algorithms, written the
// way a CUDA programmer writes them (32-bit `int` indices, `__shared__`
// arrays, `__syncthreads`, `atomicAdd`), with the same launch shapes.
// Built by the benchmark with `nvcc -O3 -arch=sm_90 -cubin` where nvcc
// exists; launched on the same buffers as the Rust kernels.
//
// Floating-point expressions use the fused multiply-adds the Rust kernels
// spell with `math::fma`, so both sides give the same bits (nvcc would
// contract them the same way by default; writing `fmaf` makes it certain).

#include <cstdint>
#include <cstddef>

#define BLOCK 256
#define ITEMS 8
#define TILE (BLOCK * ITEMS)
#define PADDED 33

extern "C" __global__ void saxpy(float* y, const float* x, int n, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaf(a, x[i], y[i]);
}

// The block's sum of one value per thread, in every thread: a butterfly of
// shuffles per warp, the warps' sums through shared memory.
__device__ __forceinline__ unsigned block_sum(unsigned v, unsigned* warp_sums) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    unsigned t = warp_sums[0];
    for (int w = 1; w < BLOCK / 32; ++w) t += warp_sums[w];
    __syncthreads();
    return t;
}

extern "C" __global__ void sum_u32(const unsigned* x, int n, unsigned* total) {
    __shared__ unsigned warp_sums[BLOCK / 32];
    unsigned acc = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc += x[i];
    unsigned t = block_sum(acc, warp_sums);
    if (threadIdx.x == 0) atomicAdd(total, t);
}

extern "C" __global__ void sum_u32_v4(const unsigned* x, int n, unsigned* total) {
    __shared__ unsigned warp_sums[BLOCK / 32];
    const uint4* v = reinterpret_cast<const uint4*>(x);
    int n4 = n / 4;
    int stride = blockDim.x * gridDim.x;
    unsigned acc = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        uint4 q = v[i];
        acc += (q.x + q.y) + (q.z + q.w);
    }
    for (int i = n4 * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
    unsigned t = block_sum(acc, warp_sums);
    if (threadIdx.x == 0) atomicAdd(total, t);
}

extern "C" __global__ void histogram(const unsigned char* x, int n, unsigned* bins) {
    __shared__ unsigned local[256];
    for (int k = threadIdx.x; k < 256; k += BLOCK) local[k] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[x[i]], 1u);
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += BLOCK) {
        unsigned c = local[k];
        if (c != 0) atomicAdd(&bins[k], c);
    }
}

// `pitch` in bytes, as cudaMallocPitch gives it.
extern "C" __global__ void stencil5(float* out, size_t out_pitch, const float* in, size_t pitch,
                                    int w, int h, float c0, float c1) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const float* row = (const float*)((const char*)in + y * pitch);
    float* o = (float*)((char*)out + y * out_pitch);
    if (x >= 1 && y >= 1 && x + 1 < w && y + 1 < h) {
        const float* up = (const float*)((const char*)row - pitch);
        const float* down = (const float*)((const char*)row + pitch);
        float around = row[x - 1] + row[x + 1] + up[x] + down[x];
        o[x] = fmaf(c1, around, c0 * row[x]);
    } else {
        o[x] = row[x];
    }
}

// out(x, y) = in(y, x); the block (bx, by) writes the output tile at
// (32 bx, 32 by), which it reads from the input tile at (32 by, 32 bx).
extern "C" __global__ void transpose_tile32(float* out, size_t out_pitch, const float* in,
                                            size_t pitch, int w, int h) {
    __shared__ float tile[32 * PADDED];
    int ox = blockIdx.x * 32, oy = blockIdx.y * 32;
    int tx = threadIdx.x, ty = threadIdx.y;
    // Input: w columns, h rows; output: h columns, w rows.
    if (oy + tx < w && ox + ty < h)
        tile[ty * PADDED + tx] = ((const float*)((const char*)in + (size_t)(ox + ty) * pitch))[oy + tx];
    __syncthreads();
    if (ox + tx < h && oy + ty < w)
        ((float*)((char*)out + (size_t)(oy + ty) * out_pitch))[ox + tx] = tile[tx * PADDED + ty];
}

extern "C" __global__ void transpose_classic(float* out, size_t out_pitch, const float* in,
                                             size_t pitch, int w, int h) {
    __shared__ float tile[32 * PADDED];
    int ox = blockIdx.x * 32, oy = blockIdx.y * 32;
    int tx = threadIdx.x, ty = threadIdx.y;
    for (int j = 0; j < 4; ++j) {
        int r = ty + 8 * j;
        if (oy + tx < w && ox + r < h)
            tile[r * PADDED + tx] = ((const float*)((const char*)in + (size_t)(ox + r) * pitch))[oy + tx];
    }
    __syncthreads();
    for (int j = 0; j < 4; ++j) {
        int r = ty + 8 * j;
        if (ox + tx < h && oy + r < w)
            ((float*)((char*)out + (size_t)(oy + r) * out_pitch))[ox + tx] = tile[tx * PADDED + r];
    }
}

struct Particle {
    float pos[3];
    float mass;
    float vel[3];
    float charge;
};

extern "C" __global__ void particles_step(Particle* ps, int n, float fx, float fy, float fz,
                                          float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle p = ps[i];
    float k = p.charge / p.mass;
    float f[3] = {fx, fy, fz};
    for (int a = 0; a < 3; ++a) {
        p.vel[a] = fmaf(f[a] * k, dt, p.vel[a]);
        p.pos[a] = fmaf(p.vel[a], dt, p.pos[a]);
    }
    ps[i] = p;
}

extern "C" __global__ void scan_reduce_tiles(const unsigned* x, int n, unsigned* sums) {
    __shared__ unsigned warp_sums[BLOCK / 32];
    int start = blockIdx.x * TILE;
    unsigned acc = 0;
    for (int k = 0; k < ITEMS; ++k) {
        int i = start + threadIdx.x + k * BLOCK;
        if (i < n) acc += x[i];
    }
    unsigned t = block_sum(acc, warp_sums);
    if (threadIdx.x == 0) sums[blockIdx.x] = t;
}

__device__ __forceinline__ int padded(int i) { return i + i / 32; }

// The exclusive scan of a tile held striped (thread r holds elements
// r + k * BLOCK), through shared memory in the blocked order, back striped,
// with `offset` added; returns the tile's total.
__device__ __forceinline__ unsigned scan_tile(unsigned (&v)[ITEMS], unsigned offset,
                                              unsigned* tile, unsigned* warp_sums) {
    int r = threadIdx.x;
    for (int k = 0; k < ITEMS; ++k) tile[padded(r + k * BLOCK)] = v[k];
    __syncthreads();
    unsigned mine[ITEMS];
    unsigned run = 0;
    for (int j = 0; j < ITEMS; ++j) {
        unsigned x = tile[padded(r * ITEMS + j)];
        mine[j] = run;
        run += x;
    }
    // The block's exclusive scan of the threads' runs.
    unsigned lane = r % 32, warp = r / 32;
    unsigned inc = run;
    for (int d = 1; d < 32; d <<= 1) {
        unsigned o = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d) inc += o;
    }
    unsigned within = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane == 0) within = 0;
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    unsigned before = 0, total = 0;
    for (int w = 0; w < BLOCK / 32; ++w) {
        unsigned s = warp_sums[w];
        if (w < warp) before += s;
        total += s;
    }
    __syncthreads();
    unsigned base = before + within + offset;
    for (int j = 0; j < ITEMS; ++j) tile[padded(r * ITEMS + j)] = base + mine[j];
    __syncthreads();
    for (int k = 0; k < ITEMS; ++k) v[k] = tile[padded(r + k * BLOCK)];
    __syncthreads();
    return total;
}

extern "C" __global__ void scan_tile_sums(unsigned* sums, int n) {
    __shared__ unsigned tile[TILE + TILE / 32];
    __shared__ unsigned warp_sums[BLOCK / 32];
    unsigned carry = 0;
    for (int start = 0; start < n; start += TILE) {
        unsigned v[ITEMS];
        for (int k = 0; k < ITEMS; ++k) {
            int i = start + threadIdx.x + k * BLOCK;
            v[k] = i < n ? sums[i] : 0;
        }
        unsigned total = scan_tile(v, carry, tile, warp_sums);
        for (int k = 0; k < ITEMS; ++k) {
            int i = start + threadIdx.x + k * BLOCK;
            if (i < n) sums[i] = v[k];
        }
        carry += total;
    }
}

extern "C" __global__ void scan_tiles(unsigned* out, const unsigned* x, int n, const unsigned* sums) {
    __shared__ unsigned tile[TILE + TILE / 32];
    __shared__ unsigned warp_sums[BLOCK / 32];
    int start = blockIdx.x * TILE;
    unsigned v[ITEMS];
    for (int k = 0; k < ITEMS; ++k) {
        int i = start + threadIdx.x + k * BLOCK;
        v[k] = i < n ? x[i] : 0;
    }
    scan_tile(v, sums[blockIdx.x], tile, warp_sums);
    for (int k = 0; k < ITEMS; ++k) {
        int i = start + threadIdx.x + k * BLOCK;
        if (i < n) out[i] = v[k];
    }
}
