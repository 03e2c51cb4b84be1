//! Sighash chain, recoverable secp256k1 signatures, signer recovery.
