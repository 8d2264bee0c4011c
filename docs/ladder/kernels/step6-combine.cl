__kernel void combine(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *oPart, __global uchar *mlPart, __global uchar *oLat, __private int rows, __private int heads, __private int numSplits, __private int dc)
{
  ulong ul_0, ul_1, ul_2, ul_34, ul_39, ul_44, ul_49, ul_54, ul_59, ul_64, ul_69, ul_74, ul_79, ul_84, ul_89, ul_94, ul_99, ul_104, ul_109, ul_177, ul_192, ul_207, ul_222, ul_237, ul_252, ul_267, ul_282, ul_307;
  bool b_119, b_126, b_133, b_140, b_147, b_154, b_161;
  double d_168, d_169, d_183, d_184, d_198, d_199, d_213, d_214, d_228, d_229, d_243, d_244, d_258, d_259, d_273, d_274;
  int i_3, i_4, i_5, i_6, i_7, i_8, i_9, i_10, i_11, i_12, i_13, i_14, i_15, i_16, i_17, i_18, i_19, i_20, i_21, i_22, i_23, i_24, i_25, i_26, i_27, i_28, i_29, i_30, i_35, i_40, i_45, i_50, i_55, i_60, i_65, i_70, i_75, i_80, i_85, i_90, i_95, i_100, i_105, i_110, i_112, i_115, i_117, i_121, i_124, i_128, i_131, i_135, i_138, i_142, i_145, i_149, i_152, i_156, i_159, i_165, i_173, i_180, i_188, i_195, i_203, i_210, i_218, i_225, i_233, i_240, i_248, i_255, i_263, i_270, i_278, i_292, i_303, i_308, i_309, i_310;
  long l_31, l_32, l_33, l_36, l_37, l_38, l_41, l_42, l_43, l_46, l_47, l_48, l_51, l_52, l_53, l_56, l_57, l_58, l_61, l_62, l_63, l_66, l_67, l_68, l_71, l_72, l_73, l_76, l_77, l_78, l_81, l_82, l_83, l_86, l_87, l_88, l_91, l_92, l_93, l_96, l_97, l_98, l_101, l_102, l_103, l_106, l_107, l_108, l_174, l_175, l_176, l_189, l_190, l_191, l_204, l_205, l_206, l_219, l_220, l_221, l_234, l_235, l_236, l_249, l_250, l_251, l_264, l_265, l_266, l_279, l_280, l_281, l_304, l_305, l_306;
  float f_111, f_113, f_114, f_116, f_118, f_120, f_122, f_123, f_125, f_127, f_129, f_130, f_132, f_134, f_136, f_137, f_139, f_141, f_143, f_144, f_146, f_148, f_150, f_151, f_153, f_155, f_157, f_158, f_160, f_162, f_163, f_164, f_166, f_167, f_170, f_171, f_172, f_178, f_179, f_181, f_182, f_185, f_186, f_187, f_193, f_194, f_196, f_197, f_200, f_201, f_202, f_208, f_209, f_211, f_212, f_215, f_216, f_217, f_223, f_224, f_226, f_227, f_230, f_231, f_232, f_238, f_239, f_241, f_242, f_245, f_246, f_247, f_253, f_254, f_256, f_257, f_260, f_261, f_262, f_268, f_269, f_271, f_272, f_275, f_276, f_277, f_283, f_284, f_285, f_286, f_287, f_288, f_289, f_290, f_291, f_293, f_294, f_295, f_296, f_297, f_298, f_299, f_300, f_301, f_302;

  // BLOCK 0
  ul_0  =  (ulong) oPart;
  ul_1  =  (ulong) mlPart;
  ul_2  =  (ulong) oLat;
  i_3  =  get_global_size(2);
  i_4  =  get_global_size(1);
  i_5  =  get_global_size(0);
  i_6  =  get_global_id(2);
  i_7  =  get_global_id(1);
  i_8  =  get_global_id(0);
  // BLOCK 1 MERGES [0 73 ]
  i_9  =  i_8;
  for(;i_9 < 1;)
  {
    // BLOCK 2
    i_10  =  i_9 << 4;
    // BLOCK 3 MERGES [2 72 ]
    i_11  =  i_7;
    for(;i_11 < 16;)
    {
      // BLOCK 4
      i_12  =  i_10 + i_11;
      i_13  =  i_12 << 9;
      i_14  =  i_12 << 3;
      i_15  =  i_14 + 7;
      i_16  =  i_15 << 9;
      i_17  =  i_14 + 6;
      i_18  =  i_17 << 9;
      i_19  =  i_14 + 5;
      i_20  =  i_19 << 9;
      i_21  =  i_14 + 4;
      i_22  =  i_21 << 9;
      i_23  =  i_14 + 3;
      i_24  =  i_23 << 9;
      i_25  =  i_14 + 2;
      i_26  =  i_25 << 9;
      i_27  =  i_14 + 1;
      i_28  =  i_27 << 9;
      i_29  =  i_12 << 12;
      i_30  =  i_15 << 1;
      l_31  =  (long) i_30;
      l_32  =  l_31 << 2;
      l_33  =  l_32 + 16L;
      ul_34  =  ul_1 + l_33;
      i_35  =  i_30 + 1;
      l_36  =  (long) i_35;
      l_37  =  l_36 << 2;
      l_38  =  l_37 + 16L;
      ul_39  =  ul_1 + l_38;
      i_40  =  i_17 << 1;
      l_41  =  (long) i_40;
      l_42  =  l_41 << 2;
      l_43  =  l_42 + 16L;
      ul_44  =  ul_1 + l_43;
      i_45  =  i_40 + 1;
      l_46  =  (long) i_45;
      l_47  =  l_46 << 2;
      l_48  =  l_47 + 16L;
      ul_49  =  ul_1 + l_48;
      i_50  =  i_19 << 1;
      l_51  =  (long) i_50;
      l_52  =  l_51 << 2;
      l_53  =  l_52 + 16L;
      ul_54  =  ul_1 + l_53;
      i_55  =  i_50 + 1;
      l_56  =  (long) i_55;
      l_57  =  l_56 << 2;
      l_58  =  l_57 + 16L;
      ul_59  =  ul_1 + l_58;
      i_60  =  i_21 << 1;
      l_61  =  (long) i_60;
      l_62  =  l_61 << 2;
      l_63  =  l_62 + 16L;
      ul_64  =  ul_1 + l_63;
      i_65  =  i_60 + 1;
      l_66  =  (long) i_65;
      l_67  =  l_66 << 2;
      l_68  =  l_67 + 16L;
      ul_69  =  ul_1 + l_68;
      i_70  =  i_23 << 1;
      l_71  =  (long) i_70;
      l_72  =  l_71 << 2;
      l_73  =  l_72 + 16L;
      ul_74  =  ul_1 + l_73;
      i_75  =  i_70 + 1;
      l_76  =  (long) i_75;
      l_77  =  l_76 << 2;
      l_78  =  l_77 + 16L;
      ul_79  =  ul_1 + l_78;
      i_80  =  i_25 << 1;
      l_81  =  (long) i_80;
      l_82  =  l_81 << 2;
      l_83  =  l_82 + 16L;
      ul_84  =  ul_1 + l_83;
      i_85  =  i_80 + 1;
      l_86  =  (long) i_85;
      l_87  =  l_86 << 2;
      l_88  =  l_87 + 16L;
      ul_89  =  ul_1 + l_88;
      i_90  =  i_27 << 1;
      l_91  =  (long) i_90;
      l_92  =  l_91 << 2;
      l_93  =  l_92 + 16L;
      ul_94  =  ul_1 + l_93;
      i_95  =  i_90 + 1;
      l_96  =  (long) i_95;
      l_97  =  l_96 << 2;
      l_98  =  l_97 + 16L;
      ul_99  =  ul_1 + l_98;
      i_100  =  i_12 << 4;
      l_101  =  (long) i_100;
      l_102  =  l_101 << 2;
      l_103  =  l_102 + 16L;
      ul_104  =  ul_1 + l_103;
      i_105  =  i_100 + 1;
      l_106  =  (long) i_105;
      l_107  =  l_106 << 2;
      l_108  =  l_107 + 16L;
      ul_109  =  ul_1 + l_108;
      // BLOCK 5 MERGES [4 71 ]
      i_110  =  i_6;
      for(;i_110 < 512;)
      {
        // BLOCK 6
        f_111  =  *((__global float *) ul_109);
        i_112  =  isless(0.0F, f_111);
        if(i_112 == 1)
        {
          // BLOCK 7
          f_113  =  *((__global float *) ul_104);
          f_114  =  f_113;
          i_115  =  1;
        }  // B6
        else
        {
          // BLOCK 8
          f_114  =  0.0F;
          i_115  =  0;
        }  // B6
        // BLOCK 9 MERGES [8 7 ]
        f_116  =  *((__global float *) ul_99);
        i_117  =  isless(0.0F, f_116);
        if(i_117 == 1)
        {
          // BLOCK 10
          f_118  =  *((__global float *) ul_94);
          b_119  =  i_115 == 0;
          if(b_119)
          {
            // BLOCK 11
            f_120  =  f_118;
            i_121  =  1;
          }  // B10
          else
          {
            // BLOCK 12
            f_122  =  fmax(f_114, f_118);
            f_120  =  f_122;
            i_121  =  1;
          }  // B10
        }  // B9
        else
        {
          // BLOCK 13
          f_120  =  f_114;
          i_121  =  i_115;
        }  // B9
        // BLOCK 14 MERGES [13 12 11 ]
        f_123  =  *((__global float *) ul_89);
        i_124  =  isless(0.0F, f_123);
        if(i_124 == 1)
        {
          // BLOCK 15
          f_125  =  *((__global float *) ul_84);
          b_126  =  i_121 == 0;
          if(b_126)
          {
            // BLOCK 16
            f_127  =  f_125;
            i_128  =  1;
          }  // B15
          else
          {
            // BLOCK 17
            f_129  =  fmax(f_120, f_125);
            f_127  =  f_129;
            i_128  =  1;
          }  // B15
        }  // B14
        else
        {
          // BLOCK 18
          f_127  =  f_120;
          i_128  =  i_121;
        }  // B14
        // BLOCK 19 MERGES [18 17 16 ]
        f_130  =  *((__global float *) ul_79);
        i_131  =  isless(0.0F, f_130);
        if(i_131 == 1)
        {
          // BLOCK 20
          f_132  =  *((__global float *) ul_74);
          b_133  =  i_128 == 0;
          if(b_133)
          {
            // BLOCK 21
            f_134  =  f_132;
            i_135  =  1;
          }  // B20
          else
          {
            // BLOCK 22
            f_136  =  fmax(f_127, f_132);
            f_134  =  f_136;
            i_135  =  1;
          }  // B20
        }  // B19
        else
        {
          // BLOCK 23
          f_134  =  f_127;
          i_135  =  i_128;
        }  // B19
        // BLOCK 24 MERGES [23 22 21 ]
        f_137  =  *((__global float *) ul_69);
        i_138  =  isless(0.0F, f_137);
        if(i_138 == 1)
        {
          // BLOCK 25
          f_139  =  *((__global float *) ul_64);
          b_140  =  i_135 == 0;
          if(b_140)
          {
            // BLOCK 26
            f_141  =  f_139;
            i_142  =  1;
          }  // B25
          else
          {
            // BLOCK 27
            f_143  =  fmax(f_134, f_139);
            f_141  =  f_143;
            i_142  =  1;
          }  // B25
        }  // B24
        else
        {
          // BLOCK 28
          f_141  =  f_134;
          i_142  =  i_135;
        }  // B24
        // BLOCK 29 MERGES [28 27 26 ]
        f_144  =  *((__global float *) ul_59);
        i_145  =  isless(0.0F, f_144);
        if(i_145 == 1)
        {
          // BLOCK 30
          f_146  =  *((__global float *) ul_54);
          b_147  =  i_142 == 0;
          if(b_147)
          {
            // BLOCK 31
            f_148  =  f_146;
            i_149  =  1;
          }  // B30
          else
          {
            // BLOCK 32
            f_150  =  fmax(f_141, f_146);
            f_148  =  f_150;
            i_149  =  1;
          }  // B30
        }  // B29
        else
        {
          // BLOCK 33
          f_148  =  f_141;
          i_149  =  i_142;
        }  // B29
        // BLOCK 34 MERGES [33 32 31 ]
        f_151  =  *((__global float *) ul_49);
        i_152  =  isless(0.0F, f_151);
        if(i_152 == 1)
        {
          // BLOCK 35
          f_153  =  *((__global float *) ul_44);
          b_154  =  i_149 == 0;
          if(b_154)
          {
            // BLOCK 36
            f_155  =  f_153;
            i_156  =  1;
          }  // B35
          else
          {
            // BLOCK 37
            f_157  =  fmax(f_148, f_153);
            f_155  =  f_157;
            i_156  =  1;
          }  // B35
        }  // B34
        else
        {
          // BLOCK 38
          f_155  =  f_148;
          i_156  =  i_149;
        }  // B34
        // BLOCK 39 MERGES [38 37 36 ]
        f_158  =  *((__global float *) ul_39);
        i_159  =  isless(0.0F, f_158);
        if(i_159 == 1)
        {
          // BLOCK 40
          f_160  =  *((__global float *) ul_34);
          b_161  =  i_156 == 0;
          if(b_161)
          {
            // BLOCK 41
            f_162  =  f_160;
          }  // B40
          else
          {
            // BLOCK 42
            f_163  =  fmax(f_155, f_160);
            f_162  =  f_163;
          }  // B40
        }  // B39
        else
        {
          // BLOCK 43
          f_162  =  f_155;
        }  // B39
        // BLOCK 44 MERGES [43 42 41 ]
        f_164  =  *((__global float *) ul_109);
        i_165  =  isless(0.0F, f_164);
        if(i_165 == 1)
        {
          // BLOCK 45
          f_166  =  *((__global float *) ul_104);
          f_167  =  f_166 - f_162;
          d_168  =  (double) f_167;
          d_169  =  exp(d_168);
          f_170  =  (float) d_169;
          f_171  =  f_170 * f_164;
          f_172  =  f_171;
        }  // B44
        else
        {
          // BLOCK 46
          f_172  =  0.0F;
        }  // B44
        // BLOCK 47 MERGES [45 46 ]
        i_173  =  i_29 + i_110;
        l_174  =  (long) i_173;
        l_175  =  l_174 << 2;
        l_176  =  l_175 + 16L;
        ul_177  =  ul_0 + l_176;
        f_178  =  *((__global float *) ul_177);
        f_179  =  *((__global float *) ul_99);
        i_180  =  isless(0.0F, f_179);
        if(i_180 == 1)
        {
          // BLOCK 48
          f_181  =  *((__global float *) ul_94);
          f_182  =  f_181 - f_162;
          d_183  =  (double) f_182;
          d_184  =  exp(d_183);
          f_185  =  (float) d_184;
          f_186  =  f_185 * f_179;
          f_187  =  f_186;
        }  // B47
        else
        {
          // BLOCK 49
          f_187  =  0.0F;
        }  // B47
        // BLOCK 50 MERGES [48 49 ]
        i_188  =  i_28 + i_110;
        l_189  =  (long) i_188;
        l_190  =  l_189 << 2;
        l_191  =  l_190 + 16L;
        ul_192  =  ul_0 + l_191;
        f_193  =  *((__global float *) ul_192);
        f_194  =  *((__global float *) ul_89);
        i_195  =  isless(0.0F, f_194);
        if(i_195 == 1)
        {
          // BLOCK 51
          f_196  =  *((__global float *) ul_84);
          f_197  =  f_196 - f_162;
          d_198  =  (double) f_197;
          d_199  =  exp(d_198);
          f_200  =  (float) d_199;
          f_201  =  f_200 * f_194;
          f_202  =  f_201;
        }  // B50
        else
        {
          // BLOCK 52
          f_202  =  0.0F;
        }  // B50
        // BLOCK 53 MERGES [51 52 ]
        i_203  =  i_26 + i_110;
        l_204  =  (long) i_203;
        l_205  =  l_204 << 2;
        l_206  =  l_205 + 16L;
        ul_207  =  ul_0 + l_206;
        f_208  =  *((__global float *) ul_207);
        f_209  =  *((__global float *) ul_79);
        i_210  =  isless(0.0F, f_209);
        if(i_210 == 1)
        {
          // BLOCK 54
          f_211  =  *((__global float *) ul_74);
          f_212  =  f_211 - f_162;
          d_213  =  (double) f_212;
          d_214  =  exp(d_213);
          f_215  =  (float) d_214;
          f_216  =  f_215 * f_209;
          f_217  =  f_216;
        }  // B53
        else
        {
          // BLOCK 55
          f_217  =  0.0F;
        }  // B53
        // BLOCK 56 MERGES [54 55 ]
        i_218  =  i_24 + i_110;
        l_219  =  (long) i_218;
        l_220  =  l_219 << 2;
        l_221  =  l_220 + 16L;
        ul_222  =  ul_0 + l_221;
        f_223  =  *((__global float *) ul_222);
        f_224  =  *((__global float *) ul_69);
        i_225  =  isless(0.0F, f_224);
        if(i_225 == 1)
        {
          // BLOCK 57
          f_226  =  *((__global float *) ul_64);
          f_227  =  f_226 - f_162;
          d_228  =  (double) f_227;
          d_229  =  exp(d_228);
          f_230  =  (float) d_229;
          f_231  =  f_230 * f_224;
          f_232  =  f_231;
        }  // B56
        else
        {
          // BLOCK 58
          f_232  =  0.0F;
        }  // B56
        // BLOCK 59 MERGES [57 58 ]
        i_233  =  i_22 + i_110;
        l_234  =  (long) i_233;
        l_235  =  l_234 << 2;
        l_236  =  l_235 + 16L;
        ul_237  =  ul_0 + l_236;
        f_238  =  *((__global float *) ul_237);
        f_239  =  *((__global float *) ul_59);
        i_240  =  isless(0.0F, f_239);
        if(i_240 == 1)
        {
          // BLOCK 60
          f_241  =  *((__global float *) ul_54);
          f_242  =  f_241 - f_162;
          d_243  =  (double) f_242;
          d_244  =  exp(d_243);
          f_245  =  (float) d_244;
          f_246  =  f_245 * f_239;
          f_247  =  f_246;
        }  // B59
        else
        {
          // BLOCK 61
          f_247  =  0.0F;
        }  // B59
        // BLOCK 62 MERGES [60 61 ]
        i_248  =  i_20 + i_110;
        l_249  =  (long) i_248;
        l_250  =  l_249 << 2;
        l_251  =  l_250 + 16L;
        ul_252  =  ul_0 + l_251;
        f_253  =  *((__global float *) ul_252);
        f_254  =  *((__global float *) ul_49);
        i_255  =  isless(0.0F, f_254);
        if(i_255 == 1)
        {
          // BLOCK 63
          f_256  =  *((__global float *) ul_44);
          f_257  =  f_256 - f_162;
          d_258  =  (double) f_257;
          d_259  =  exp(d_258);
          f_260  =  (float) d_259;
          f_261  =  f_260 * f_254;
          f_262  =  f_261;
        }  // B62
        else
        {
          // BLOCK 64
          f_262  =  0.0F;
        }  // B62
        // BLOCK 65 MERGES [63 64 ]
        i_263  =  i_18 + i_110;
        l_264  =  (long) i_263;
        l_265  =  l_264 << 2;
        l_266  =  l_265 + 16L;
        ul_267  =  ul_0 + l_266;
        f_268  =  *((__global float *) ul_267);
        f_269  =  *((__global float *) ul_39);
        i_270  =  isless(0.0F, f_269);
        if(i_270 == 1)
        {
          // BLOCK 66
          f_271  =  *((__global float *) ul_34);
          f_272  =  f_271 - f_162;
          d_273  =  (double) f_272;
          d_274  =  exp(d_273);
          f_275  =  (float) d_274;
          f_276  =  f_275 * f_269;
          f_277  =  f_276;
        }  // B65
        else
        {
          // BLOCK 67
          f_277  =  0.0F;
        }  // B65
        // BLOCK 68 MERGES [66 67 ]
        i_278  =  i_16 + i_110;
        l_279  =  (long) i_278;
        l_280  =  l_279 << 2;
        l_281  =  l_280 + 16L;
        ul_282  =  ul_0 + l_281;
        f_283  =  *((__global float *) ul_282);
        f_284  =  f_172 + 0.0F;
        f_285  =  f_284 + f_187;
        f_286  =  f_285 + f_202;
        f_287  =  f_286 + f_217;
        f_288  =  f_287 + f_232;
        f_289  =  f_288 + f_247;
        f_290  =  f_289 + f_262;
        f_291  =  f_290 + f_277;
        i_292  =  isless(0.0F, f_291);
        if(i_292 == 1)
        {
          // BLOCK 69
          f_293  =  fma(f_172, f_178, 0.0F);
          f_294  =  fma(f_187, f_193, f_293);
          f_295  =  fma(f_202, f_208, f_294);
          f_296  =  fma(f_217, f_223, f_295);
          f_297  =  fma(f_232, f_238, f_296);
          f_298  =  fma(f_247, f_253, f_297);
          f_299  =  fma(f_262, f_268, f_298);
          f_300  =  fma(f_277, f_283, f_299);
          f_301  =  f_300 / f_291;
          f_302  =  f_301;
        }  // B68
        else
        {
          // BLOCK 70
          f_302  =  0.0F;
        }  // B68
        // BLOCK 71 MERGES [69 70 ]
        i_303  =  i_13 + i_110;
        l_304  =  (long) i_303;
        l_305  =  l_304 << 2;
        l_306  =  l_305 + 16L;
        ul_307  =  ul_2 + l_306;
        *((__global float *) ul_307)  =  f_302;
        i_308  =  i_3 + i_110;
        i_110  =  i_308;
      }  // B5
      // BLOCK 72
      i_309  =  i_4 + i_11;
      i_11  =  i_309;
    }  // B3
    // BLOCK 73
    i_310  =  i_5 + i_9;
    i_9  =  i_310;
  }  // B1
  // BLOCK 74
  return;
}
