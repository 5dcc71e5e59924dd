//! The host side of typed launches: [`Module`] (a kernel crate's PTX, loaded
//! once per context and checked kernel by kernel), [`LaunchArg`] (which host
//! values a parameter accepts) and the launch itself. Host builds only.

mod args;
mod call;
mod module;

pub use args::{LaunchArg, LaunchStream};
pub use call::{__launch, __launch_unsafe, KernelParams, Launch, LaunchArgs};
pub use module::{Module, Occupancy};
