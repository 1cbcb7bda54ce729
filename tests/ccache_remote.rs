//! ccache's remote storage passed through (`--ccache-remote`): two runners
//! with empty local ccaches share compiled objects through an HTTP server on
//! loopback that this test starts. The OpenSSL is the small fake one in
//! tests/fake-openssl (synthetic repository), compiled and linked in separate
//! steps so that ccache can cache the compilations.

use crate::common;
use common::*;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Store {
    objects: HashMap<String, Vec<u8>>,
    puts: usize,
    hits: usize,
}

/// A minimal HTTP/1.1 object store: GET/HEAD/PUT/DELETE, keep-alive.
fn serve(store: Arc<Mutex<Store>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let store = store.clone();
            std::thread::spawn(move || {
                let _ = handle(conn, &store);
            });
        }
    });
    port
}

fn handle(conn: TcpStream, store: &Mutex<Store>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut out = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.len() < 2 {
            return Ok(());
        }
        let (method, path) = (parts[0].to_string(), parts[1].to_string());
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            r.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body)?;
        let mut s = store.lock().unwrap();
        let (status, payload): (&str, Vec<u8>) = match method.as_str() {
            "PUT" => {
                s.puts += 1;
                s.objects.insert(path, body);
                ("201 Created", Vec::new())
            }
            "GET" | "HEAD" => match s.objects.get(&path).cloned() {
                Some(b) => {
                    s.hits += 1;
                    ("200 OK", b)
                }
                None => ("404 Not Found", Vec::new()),
            },
            "DELETE" => {
                s.objects.remove(&path);
                ("204 No Content", Vec::new())
            }
            _ => ("405 Method Not Allowed", Vec::new()),
        };
        drop(s);
        write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n",
            payload.len()
        )?;
        if method != "HEAD" {
            out.write_all(&payload)?;
        }
        out.flush()?;
    }
}

/// The fake OpenSSL with compile and link split (ccache caches `-c` only).
fn fake_repo(dir: &Path) {
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl");
    let st = std::process::Command::new("cp")
        .arg("-r")
        .arg(&template)
        .arg(dir)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(dir.join("fake_cost.h"), "#define FAKE_COST 1000\n").unwrap();
    std::fs::write(
        dir.join("Makefile.in"),
        "SRC=@SRC@\nCC=@CC@\nPREFIX=/nonexistent/perfbisect-openssl\n\
         build_libs: libcrypto.so.3 libssl.so.3\n\
         buildinf.h: $(SRC)/crypto.c\n\techo \"#define FAKE_BUILT_ON \\\"built on: $${SOURCE_DATE_EPOCH}\\\"\" >$@\n\
         crypto.o: $(SRC)/crypto.c $(SRC)/fake_cost.h buildinf.h\n\t$(CC) -O1 -fPIC -I$(SRC)/include -I$(SRC) -I. -c -o crypto.o $(SRC)/crypto.c\n\
         ssl.o: $(SRC)/ssl.c\n\t$(CC) -O1 -fPIC -c -o ssl.o $(SRC)/ssl.c\n\
         libcrypto.so.3: crypto.o\n\tcc -shared -Wl,-soname,libcrypto.so.3 -o $@ crypto.o\n\
         libssl.so.3: ssl.o libcrypto.so.3\n\tcc -shared -Wl,-soname,libssl.so.3 -o $@ ssl.o\n\
         install_dev: build_libs\n\tmkdir -p $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/openssl\n\
         \tcp libcrypto.so.3 libssl.so.3 $(DESTDIR)$(PREFIX)/lib/\n\
         \tln -sf libcrypto.so.3 $(DESTDIR)$(PREFIX)/lib/libcrypto.so\n\
         \tln -sf libssl.so.3 $(DESTDIR)$(PREFIX)/lib/libssl.so\n\
         \tcp $(SRC)/include/openssl/*.h $(DESTDIR)$(PREFIX)/include/openssl/\n\
         .PHONY: build_libs install_dev\n",
    )
    .unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "fake 3.0.0"]);
}

#[test]
fn two_runners_share_objects_through_http_remote_storage_synthetic_repo() {
    if std::process::Command::new("ccache")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("ccache is required (scripts/setup installs it)");
    }
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    fake_repo(&repo);
    let store = Arc::new(Mutex::new(Store::default()));
    let port = serve(store.clone());
    let url = format!("http://127.0.0.1:{port}/ccache");

    let build = |runner: &str| {
        let o = perfbisect(&d.path().join(format!("cache-{runner}")))
            .args(["build", "--repo"])
            .arg(&repo)
            .args(["--ccache-remote", &url, "HEAD"])
            .env("CCACHE_DIR", d.path().join(format!("ccache-{runner}")))
            .output()
            .unwrap();
        assert!(o.status.success(), "{runner}: {}{}", stdout(&o), stderr(&o));
        stdout(&o)
    };
    let first = build("a");
    assert!(first.contains("built in"), "{first}");
    let puts = store.lock().unwrap().puts;
    assert!(puts >= 2, "runner a stored {puts} objects remotely");
    // Runner b has an empty local ccache and a cache of its own: its
    // compilations come from the remote storage.
    let second = build("b");
    assert!(second.contains("from remote storage"), "{second}");
    assert!(store.lock().unwrap().hits >= 2);

    // Unsupported schemes are refused up front.
    let o = perfbisect(&d.path().join("cache-c"))
        .args(["build", "--repo"])
        .arg(&repo)
        .args(["--ccache-remote", "ftp://example.invalid/x", "HEAD"])
        .output()
        .unwrap();
    assert_usage_error(&o, "unsupported ccache remote storage");
}
