//! `cargo +nightly fuzz run template`: the `template` target of `aelc-fuzz` under libFuzzer.
#![no_main]

use libfuzzer_sys::fuzz_target;

thread_local! {
    static CHECK: aelc_fuzz::targets::Check =
        aelc_fuzz::targets::check_of("template").expect("a target of aelc-fuzz");
}

fuzz_target!(|data: &[u8]| {
    CHECK.with(|check| {
        if let Err(why) = check(data) {
            panic!("template: {why}");
        }
    })
});
