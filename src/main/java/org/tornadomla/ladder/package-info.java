/** The kernel ladder (docs/ladder/): eight steps from naive MHA attention to the KernelContext and int8 versions, run by {@code mla ladder}. Teaching code, not library API. */
package org.tornadomla.ladder;
