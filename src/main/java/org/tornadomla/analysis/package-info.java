/** Low-rank analysis behind {@code mla rank}: SVD of attention weights and an MHA layer converted to MLA form. A tool, not library API. */
package org.tornadomla.analysis;
