//! `VCVT_BACKEND` forces a backend. The dispatcher reads it once per process, so each case
//! runs this test binary again as a child process with the variable set, and the child test
//! (`child`, inert unless `VCVT_OVERRIDE_CHILD` is set) reports what it saw.

mod common;

use vcvt::{Backend, Converter, F16, Options};

/// Runs the `child` test of this binary with `VCVT_BACKEND` set to `value`.
fn run_child(value: Option<&str>, expect: &str) -> std::process::Output {
    let mut cmd = common::rerun_self();
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("VCVT_OVERRIDE_CHILD", expect)
        .env_remove("VCVT_BACKEND");
    if let Some(v) = value {
        cmd.env("VCVT_BACKEND", v);
    }
    cmd.output().unwrap()
}

/// The child side: asserts that the active backend is the one named in `VCVT_OVERRIDE_CHILD`
/// (or that the first conversion panics, when that variable says `panic`).
#[test]
fn child() {
    let Ok(expect) = std::env::var("VCVT_OVERRIDE_CHILD") else {
        return; // Only meaningful when spawned by the tests below.
    };
    let src = [1.5f32, -2.0];
    let mut dst = [F16::ZERO; 2];
    if expect == "panic" {
        // Must not return: the first conversion panics with the reason.
        vcvt::convert_slice(&src, &mut dst);
        println!("CHILD-DID-NOT-PANIC active={}", Backend::active());
        return;
    }
    vcvt::convert_slice(&src, &mut dst);
    assert_eq!(dst[0].to_f32(), 1.5);
    println!("CHILD-ACTIVE={}", Backend::active());
    assert_eq!(Backend::active().name(), expect);
    // A handle made for a named backend keeps it whatever VCVT_BACKEND says; one made for
    // the active backend takes the forced one.
    assert_eq!(
        Converter::<f32, F16>::new(Options::new()).backend().name(),
        expect
    );
    // The block row handles likewise.
    let mxfp4 = vcvt::block::Mx::new(vcvt::block::MxElement::E2M1);
    assert_eq!(mxfp4.rows::<f32>(64).unwrap().backend().name(), expect);
    for b in Backend::available() {
        assert_eq!(mxfp4.on(b).rows::<f32>(64).unwrap().backend(), b);
        let fp8 = vcvt::block::BlockFp8::deepseek().on(b);
        assert_eq!(fp8.rows::<F16>(64).unwrap().backend(), b);
    }
    for b in Backend::available() {
        let c = Converter::<f32, F16>::on(b, Options::new()).unwrap();
        let mut out = [F16::ZERO; 2];
        c.convert(&src, &mut out);
        assert_eq!(c.backend(), b);
        assert_eq!(out, dst, "{b}");
    }
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn each_available_backend_can_be_forced() {
    for b in Backend::available() {
        let o = run_child(Some(b.name()), b.name());
        assert!(o.status.success(), "{b}: {}\n{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains(&format!("CHILD-ACTIVE={}", b.name())),
            "{}",
            stdout(&o)
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn unset_or_empty_means_the_best_available() {
    let best = Backend::available().next().unwrap();
    for v in [None, Some("")] {
        let o = run_child(v, best.name());
        assert!(o.status.success(), "{v:?}: {}\n{}", stdout(&o), stderr(&o));
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn an_unknown_name_is_reported_not_ignored() {
    let o = run_child(Some("sse9"), "panic");
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(!stdout(&o).contains("CHILD-DID-NOT-PANIC"));
    let err = stderr(&o) + &stdout(&o);
    assert!(
        err.contains("VCVT_BACKEND=\"sse9\" names no vcvt backend"),
        "{err}"
    );
    assert!(
        err.contains("scalar"),
        "the message lists the known names: {err}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn an_unavailable_backend_is_reported_not_ignored() {
    let Some(b) = Backend::ALL.iter().find(|b| !b.is_available()) else {
        println!(
            "SKIPPED: an_unavailable_backend_is_reported_not_ignored: every backend of this build runs on this CPU"
        );
        return;
    };
    let o = run_child(Some(b.name()), "panic");
    assert!(!o.status.success());
    let err = stderr(&o) + &stdout(&o);
    assert!(err.contains("this CPU cannot run"), "{err}");
}

#[test]
fn convert_slice_on_refuses_or_runs_each_backend() {
    for &b in Backend::ALL {
        let mut dst = [F16::ZERO; 3];
        let r = vcvt::convert_slice_on(b, &[1.0f32, 2.0, 3.0], &mut dst, Options::new());
        assert_eq!(r.is_ok(), b.is_available(), "{b}");
    }
}

#[test]
fn from_env_reads_the_variable_each_time() {
    // The test harness may run this in parallel with others, and `from_env` reads the live
    // environment, so only check the case that needs no mutation.
    if std::env::var_os("VCVT_BACKEND").is_none() {
        assert_eq!(Backend::from_env(), Ok(None));
    }
}
