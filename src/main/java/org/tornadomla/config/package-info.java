/**
 * A layer's geometry and RoPE settings: {@link org.tornadomla.config.MlaConfig} (built-in presets, or a
 * Hugging Face config.json with DeepSeek's names), its YaRN {@link org.tornadomla.config.RopeScaling}, and the
 * rotary frequencies derived from them.
 */
package org.tornadomla.config;
