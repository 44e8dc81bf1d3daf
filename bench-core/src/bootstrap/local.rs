//! The bootstrap for ranks of one process: tasks of an emulated job, or threads (tests).

use std::collections::HashMap;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{random_hex, Bootstrap, BootstrapError};
use crate::tasks;

/// The key-value store, and per fence name its (generation, arrivals in this generation).
type Store = (HashMap<String, String>, HashMap<String, (u64, usize)>);

struct Shared {
    size: usize,
    token: String,
    job_id: String,
    state: Mutex<Store>,
    changed: Condvar,
    events: Mutex<Option<mpsc::Sender<(usize, String)>>>,
}

impl Shared {
    /// Waits up to `timeout` for the store to change. A rank that is a task (an emulated
    /// job's ranks, all on one thread) lets the others run instead: blocking the thread would
    /// stop the very ranks it waits for.
    fn wait<'a>(&'a self, st: MutexGuard<'a, Store>, timeout: Duration) -> MutexGuard<'a, Store> {
        if tasks::current().is_some() {
            drop(st);
            tasks::yield_now();
            return self.state.lock().unwrap();
        }
        self.changed.wait_timeout(st, timeout).unwrap().0
    }
}

/// One thread-rank's handle; make a whole group with [`group`].
#[derive(Clone)]
pub struct Local {
    rank: usize,
    shared: Arc<Shared>,
}

/// `size` handles sharing one store. Events ranks send arrive on the returned receiver as
/// (rank, json); stage reports are dropped (the caller can read the rank's stage directly).
pub fn group(size: usize) -> (Vec<Local>, mpsc::Receiver<(usize, String)>) {
    let (tx, rx) = mpsc::channel();
    let shared = Arc::new(Shared {
        size,
        token: random_hex(16),
        job_id: random_hex(6),
        state: Mutex::new((HashMap::new(), HashMap::new())),
        changed: Condvar::new(),
        events: Mutex::new(Some(tx)),
    });
    let ranks = (0..size)
        .map(|rank| Local {
            rank,
            shared: shared.clone(),
        })
        .collect();
    (ranks, rx)
}

impl Bootstrap for Local {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn token(&self) -> &str {
        &self.shared.token
    }
    fn job_id(&self) -> &str {
        &self.shared.job_id
    }

    fn put(&self, key: &str, value: &str) -> Result<(), BootstrapError> {
        let mut st = self.shared.state.lock().unwrap();
        st.0.insert(key.to_string(), value.to_string());
        self.shared.changed.notify_all();
        Ok(())
    }

    fn get(&self, key: &str, timeout: Duration) -> Result<String, BootstrapError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.lock().unwrap();
        loop {
            if let Some(v) = st.0.get(key) {
                return Ok(v.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(BootstrapError::Timeout {
                    what: format!("key '{key}'"),
                    after: timeout,
                });
            }
            st = self.shared.wait(st, deadline - now);
        }
    }

    fn fence(&self, name: &str, timeout: Duration) -> Result<(), BootstrapError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.lock().unwrap();
        let entry = st.1.entry(name.to_string()).or_insert((0, 0));
        let gen = entry.0;
        entry.1 += 1;
        if entry.1 == self.shared.size {
            entry.0 += 1;
            entry.1 = 0;
            self.shared.changed.notify_all();
            return Ok(());
        }
        loop {
            if st.1[name].0 != gen {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(BootstrapError::Timeout {
                    what: format!("fence '{name}'"),
                    after: timeout,
                });
            }
            st = self.shared.wait(st, deadline - now);
        }
    }

    fn report_stage(&self, _stage: &str) {}

    fn in_process(&self) -> bool {
        true
    }

    /// Every rank is in this process: fabric traffic stays on loopback.
    fn local_ip(&self) -> Option<std::net::IpAddr> {
        Some(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST))
    }

    fn send_event(&self, json: &str) -> Result<(), BootstrapError> {
        if let Some(tx) = self.shared.events.lock().unwrap().as_ref() {
            let _ = tx.send((self.rank, json.to_string()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    /// Each rank publishes its key, meets the others at a fence and reads every key.
    fn exchange(b: &Local) {
        b.put(&format!("k{}", b.rank()), &b.rank().to_string())
            .unwrap();
        b.fence("f", Duration::from_secs(5)).unwrap();
        for r in 0..3 {
            assert_eq!(
                b.get(&format!("k{r}"), Duration::from_secs(1)).unwrap(),
                r.to_string()
            );
        }
    }

    #[test]
    fn threads_exchange_keys_and_fence() {
        let (ranks, events) = group(3);
        thread::scope(|s| {
            for b in &ranks {
                s.spawn(move || {
                    exchange(b);
                    b.fence("f", Duration::from_secs(5)).unwrap();
                });
            }
        });
        ranks[2].send_event("{}").unwrap();
        assert_eq!(events.recv().unwrap(), (2, "{}".to_string()));
        assert!(ranks[0].get("nope", Duration::from_millis(10)).is_err());
        assert_eq!(ranks[0].job_id(), ranks[1].job_id());
    }

    /// Ranks that are tasks of one thread: a wait lets the others run, so they all get
    /// through the fences; and a fence one rank never reaches times out instead of hanging.
    #[test]
    fn tasks_exchange_keys_and_fence_on_one_thread() {
        let (ranks, _events) = group(3);
        tasks::run_all(
            ranks
                .into_iter()
                .map(|b| {
                    move || {
                        exchange(&b);
                        if b.rank() != 2 {
                            let e = b.fence("g", Duration::from_millis(50)).unwrap_err();
                            assert!(e.to_string().contains("fence 'g'"), "{e}");
                        }
                    }
                })
                .collect(),
        );
    }
}
