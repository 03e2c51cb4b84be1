//! For tests: the lines logged on the current thread while a [`Capture`] lives, as the text
//! format writes them (without times or colours).

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;

#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Captures this thread's log (every level) until dropped.
pub struct Capture {
    lines: Lines,
    _guard: DefaultGuard,
}

impl Capture {
    pub fn start() -> Capture {
        let lines = Lines::default();
        let sink = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .without_time()
            .finish();
        Capture { lines, _guard: tracing::subscriber::set_default(subscriber) }
    }

    /// The lines logged so far.
    pub fn lines(&self) -> Vec<String> {
        let bytes = self.lines.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        String::from_utf8_lossy(&bytes).lines().map(str::to_owned).collect()
    }
}
