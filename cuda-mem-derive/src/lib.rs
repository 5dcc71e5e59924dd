//! Placeholder.
use proc_macro::TokenStream;
/// Placeholder.
#[proc_macro_derive(DeviceCopy, attributes(device_copy))]
pub fn derive_device_copy(_input: TokenStream) -> TokenStream { TokenStream::new() }
