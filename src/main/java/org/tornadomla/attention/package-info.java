/**
 * The MLA layer: {@link org.tornadomla.attention.MlaLayer} builds one kernel graph per step shape and runs it on
 * an executor; {@link org.tornadomla.attention.AttentionPath} chooses among the three equivalent ways to attend
 * (naive, absorbed, tiled) and {@link org.tornadomla.attention.AttentionOptions} sets the tiled path's tile and
 * KV splits.
 */
package org.tornadomla.attention;
