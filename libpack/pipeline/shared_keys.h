/* Content keys that several programs of a model set hold: one key, one content. */
#ifndef XPACK_PIPELINE_SHARED_KEYS_H
#define XPACK_PIPELINE_SHARED_KEYS_H

#include "xpack_pipeline.h"

/* Refuses a set in which two programs hold, in their own named_data, a content key (one that names a weight by
 * the SHA-256 of its bytes, trusted unread: xpack_et_identity_reads_bytes false) over different bytes, where no
 * .ptd of the set holds the key (named keys are found in the .ptd files first). Packed together, the first
 * program's weight would be stored under the key and served to the other. Refuses too a content key a program's
 * named_data and a .ptd both hold over different bytes (ExecuTorch reads the .ptd's; the program run without the
 * .ptd would be served their packing). Compares the bytes of each such pair once (nothing for a key that one
 * .ptd or one program holds alone). XPACK_OK, XPACK_ERR_BAD_INPUT naming both files and the key, XPACK_ERR_NOMEM. */
xpack_status xp_check_shared_content_keys(const xpack_model_set* set, xpack_error* err);

#endif
