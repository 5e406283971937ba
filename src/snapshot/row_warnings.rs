//! `derive`, step 1: what the row itself says about how far its values can be trusted (previews,
//! encrypted values, an id that is not a uuid).

use super::{Input, Warning};

/// Warnings about the checkpoint row and its writes, in the order the snapshot lists them.
pub(super) fn row_warnings(input: &Input, cid: Option<uuid::Uuid>) -> Vec<Warning> {
    let cp = input.checkpoint;
    let row = input.row;
    let mut warnings = Vec::new();
    if let Some(len) = row.preview_of {
        warnings.push(Warning {
            field: "values".into(),
            message: format!(
                "the checkpoint blob is {len} bytes, more than the {} bytes or {} values superstep loads whole: values are a preview (strings over 64 KiB and lists over 1,000 items cut, marked \"… [cut by superstep …]\")",
                crate::store::PREVIEW_OVER,
                crate::store::DENSE_OVER
            ),
        });
    }
    if let Some(len) = row.metadata_preview_of {
        warnings.push(Warning {
            field: "metadata".into(),
            message: format!(
                "the metadata is {len} bytes, over the {} superstep parses whole: it is a preview (strings over 64 KiB and lists over 1,000 items cut, marked \"… [cut by superstep …]\")",
                crate::store::META_OVER
            ),
        });
    }
    // EncryptedSerializer's envelopes: opaque, said once per snapshot
    let mut ciphers = Vec::new();
    for (_, v) in &cp.channel_values {
        crate::value::encrypted_ciphers(v, &mut ciphers);
    }
    for w in input.writes.iter() {
        if let Some(v) = w.value.as_value() {
            crate::value::encrypted_ciphers(v, &mut ciphers);
        }
    }
    if !ciphers.is_empty() {
        warnings.push(Warning {
            field: "values".into(),
            message: format!(
                "values written by LangGraph's EncryptedSerializer ({}) are shown opaque (__type__ \"encrypted\"): superstep has no key to decrypt them",
                ciphers.join(", ")
            ),
        });
    }
    for w in input.writes.iter().filter(|w| w.cut.is_some()) {
        warnings.push(Warning {
            field: "pending_writes".into(),
            message: format!(
                "the {} write of task {} (idx {}) is {} bytes: its value is a preview (superstep loads whole at most {} bytes and {} values)",
                w.channel,
                w.task_id,
                w.idx,
                w.cut.unwrap_or(0),
                crate::store::PREVIEW_OVER,
                crate::store::DENSE_OVER
            ),
        });
    }
    if cid.is_none() {
        // LangGraph hashes the id's hex bytes into every task id: its own get_state raises
        // ValueError on such a checkpoint (binascii.unhexlify)
        warnings.push(Warning {
            field: "tasks.id".into(),
            message: format!(
                "checkpoint id {:?} is not a hex uuid: task ids cannot be computed (LangGraph's get_state raises ValueError on it)",
                row.checkpoint_id
            ),
        });
    }
    warnings
}
