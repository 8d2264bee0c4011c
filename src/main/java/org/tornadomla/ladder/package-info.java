/** The kernel ladder (docs/ladder/): nine steps from naive MHA attention to the KernelContext and int8 versions and DeepSeek-V3.2's sparse attention, run by {@code mla ladder}. Teaching code, not library API. */
package org.tornadomla.ladder;
