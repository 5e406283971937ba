use clap::Parser;
use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, except that a failed allocation first gives the terminal back (the
/// process aborts right after, skipping every Drop and the panic hook; see
/// `superstep::tui::emergency_restore`).
struct RestoreOnOom;

// SAFETY: every call is forwarded to the system allocator unchanged
unsafe impl GlobalAlloc for RestoreOnOom {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() {
            superstep::tui::emergency_restore();
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            superstep::tui::emergency_restore();
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            superstep::tui::emergency_restore();
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOC: RestoreOnOom = RestoreOnOom;

fn main() {
    let cli = superstep::cli::Cli::parse();
    std::process::exit(superstep::commands::run(cli));
}
