//! Connection limits of the live-update servers, with the incumbent's environment names where
//! it has one.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveConfig {
    /// How often the server pings each connection (`STACKS_API_WS_PING_INTERVAL`, seconds).
    pub ping_interval: Duration,
    /// How long after a ping without any frame from the peer it is dropped
    /// (`STACKS_API_WS_PING_TIMEOUT`, seconds).
    pub ping_timeout: Duration,
    /// How long one frame may take to be written before the peer is dropped
    /// (`STACKS_API_WS_MESSAGE_TIMEOUT`, seconds).
    pub message_timeout: Duration,
    /// Notifications one connection may fall behind before it is dropped as a slow consumer
    /// (`STACKS_LIVE_QUEUE`).
    pub queue: usize,
    /// Notifications kept for resume (`STACKS_LIVE_REPLAY_WINDOW`).
    pub replay_window: usize,
    /// How long after the last connection left notifications are still computed, so that a
    /// client can resume (`STACKS_LIVE_IDLE_GRACE`, seconds, 0 allowed). With no connection
    /// and none since start or for this long, ingested changes are not rendered at all
    /// (`Hub::skip_if_idle`).
    pub idle_grace: Duration,
}

impl Default for LiveConfig {
    fn default() -> LiveConfig {
        LiveConfig {
            ping_interval: Duration::from_secs(5),
            ping_timeout: Duration::from_secs(5),
            message_timeout: Duration::from_secs(5),
            queue: 4_096,
            replay_window: 10_000,
            idle_grace: Duration::from_secs(300),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{name}={value:?}: {reason}")]
pub struct ConfigError {
    pub name: &'static str,
    pub value: String,
    pub reason: &'static str,
}

impl LiveConfig {
    /// From environment-style lookups; unset names keep their defaults. The server's `Config`
    /// calls this with its one environment lookup.
    pub fn resolve(get: impl Fn(&str) -> Option<String>) -> Result<LiveConfig, ConfigError> {
        let mut c = LiveConfig::default();
        let parse =
            |name: &'static str, min: u64, reason: &'static str| -> Result<Option<u64>, ConfigError> {
                match get(name) {
                    None => Ok(None),
                    Some(v) => match v.trim().parse::<u64>() {
                        Ok(n) if n >= min => Ok(Some(n)),
                        _ => Err(ConfigError { name, value: v, reason }),
                    },
                }
            };
        let num = |name: &'static str| parse(name, 1, "must be a positive integer");
        if let Some(s) = num("STACKS_API_WS_PING_INTERVAL")? {
            c.ping_interval = Duration::from_secs(s);
        }
        if let Some(s) = num("STACKS_API_WS_PING_TIMEOUT")? {
            c.ping_timeout = Duration::from_secs(s);
        }
        if let Some(s) = num("STACKS_API_WS_MESSAGE_TIMEOUT")? {
            c.message_timeout = Duration::from_secs(s);
        }
        if let Some(n) = num("STACKS_LIVE_QUEUE")? {
            c.queue = n as usize;
        }
        if let Some(n) = num("STACKS_LIVE_REPLAY_WINDOW")? {
            c.replay_window = n as usize;
        }
        if let Some(s) = parse("STACKS_LIVE_IDLE_GRACE", 0, "must be a whole number of seconds")? {
            c.idle_grace = Duration::from_secs(s);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_defaults_and_bad_values_are_named() {
        let c = LiveConfig::resolve(|k| (k == "STACKS_API_WS_PING_INTERVAL").then(|| "30".into())).unwrap();
        assert_eq!(c.ping_interval, Duration::from_secs(30));
        assert_eq!(c.queue, LiveConfig::default().queue);
        let e = LiveConfig::resolve(|k| (k == "STACKS_LIVE_QUEUE").then(|| "x".into())).unwrap_err();
        assert_eq!(e.name, "STACKS_LIVE_QUEUE");
        let c = LiveConfig::resolve(|k| (k == "STACKS_LIVE_IDLE_GRACE").then(|| "0".into())).unwrap();
        assert_eq!(c.idle_grace, Duration::ZERO);
        let e = LiveConfig::resolve(|k| (k == "STACKS_LIVE_IDLE_GRACE").then(|| "-1".into())).unwrap_err();
        assert_eq!(e.name, "STACKS_LIVE_IDLE_GRACE");
    }
}
