//! `sqlx::migrate!` embeds migrations/ when the manager compiles, and cargo does not know it reads that
//! folder: without this, a migration added after a build was missing from the next build's binary.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
