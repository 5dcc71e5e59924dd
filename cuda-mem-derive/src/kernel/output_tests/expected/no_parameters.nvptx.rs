::cuda_mem::__kernel_entry! {
    name tick, symbol "tick", unsafe_kernel false, source 8761116119685133851u64,
    lifetimes[], params[], docs[], kernel { #[inline(always)] fn tick() {} }
}
