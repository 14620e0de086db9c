//! Rebuilds the crate when a migration changes: `sqlx::migrate!` embeds `migrations/` at
//! compile time, and cargo does not know the macro read those files.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
