// The kernel compiler (cc crate) needs the target triple at run time, and
// Cargo only tells build scripts.
fn main() {
    println!(
        "cargo:rustc-env=PERFBISECT_TARGET={}",
        std::env::var("TARGET").unwrap()
    );
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=build-recipes");
}
