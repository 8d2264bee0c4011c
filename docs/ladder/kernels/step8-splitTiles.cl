__kernel void splitTiles(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *qLat, __global uchar *q, __global uchar *kvFloats, __global uchar *kvHalves, __global uchar *kvBytes, __private int dtype, __global uchar *sTile, __global uchar *oPart, __global uchar *mlPart, __global uchar *seqStart, __private int batch, __private int tokens, __private int capacity, __private int heads, __private int dn, __private int dr, __private int dc, __private float scale, __private int tileSize, __private int numSplits)
{
  long l_150, l_149, l_148, l_19, l_18, l_17, l_209, l_208, l_207, l_91, l_90, l_89, l_194, l_193, l_192, l_63, l_78, l_77, l_204, l_139, l_203, l_138, l_202, l_73, l_137, l_72, l_71, l_114, l_113, l_112, l_176, l_175, l_62, l_61, l_102, l_37, l_36, l_35, l_162, l_97, l_161, l_96, l_160, l_171, l_170, l_169, l_104, l_103; 
  bool b_118, b_125, b_122; 
  ulong ul_172, ul_38, ul_105, ul_115, ul_177, ul_2, ul_3, ul_195, ul_4, ul_5, ul_0, ul_64, ul_1, ul_74, ul_140, ul_205, ul_6, ul_7, ul_210, ul_20, ul_79, ul_92, ul_151, ul_98, ul_163; 
  int i_60, i_59, i_187, i_58, i_186, i_57, i_185, i_55, i_183, i_54, i_69, i_67, i_66, i_65, i_191, i_190, i_45, i_44, i_43, i_42, i_41, i_40, i_168, i_39, i_167, i_166, i_53, i_52, i_49, i_48, i_47, i_46, i_174, i_88, i_87, i_101, i_100, i_95, i_94, i_76, i_201, i_199, i_70, i_198, i_85, i_213, i_212, i_211, i_206, i_121, i_129, i_127, i_117, i_111, i_110, i_29, i_157, i_28, i_27, i_26, i_25, i_24, i_23, i_22, i_165, i_164, i_34, i_33, i_32, i_31, i_159, i_30, i_158, i_13, i_12, i_11, i_10, i_9, i_8, i_136, i_135, i_21, i_147, i_146, i_16, i_15, i_143, i_14; 
  float f_106, f_108, f_107, f_93, f_153, f_156, f_86, f_152, f_82, f_81, f_145, f_84, f_83, f_142, f_141, f_144, f_75, f_134, f_197, f_200, f_130, f_68, f_196, f_131, f_126, f_189, f_128, f_124, f_188, f_123, f_182, f_181, f_56, f_120, f_184, f_119, f_50, f_116, f_180, f_51, f_179, f_109, f_173; 
  char ch_178, ch_80, ch_99; 
  double d_133, d_132, d_155, d_154; 

  // BLOCK 0
  ul_0  =  (ulong) qLat;
  ul_1  =  (ulong) q;
  ul_2  =  (ulong) kvFloats;
  ul_3  =  (ulong) kvBytes;
  ul_4  =  (ulong) sTile;
  ul_5  =  (ulong) oPart;
  ul_6  =  (ulong) mlPart;
  ul_7  =  (ulong) seqStart;
  i_8  =  get_global_size(2);
  i_9  =  get_global_size(1);
  i_10  =  get_global_size(0);
  i_11  =  get_global_id(2);
  i_12  =  get_global_id(1);
  i_13  =  get_global_id(0);
  // BLOCK 1 MERGES [0 55 ]
  i_14  =  i_13;
  for(;i_14 < 1;)
  {
    // BLOCK 2
    i_15  =  i_14 << 8;
    i_16  =  i_14 << 4;
    l_17  =  (long) i_14;
    l_18  =  l_17 << 2;
    l_19  =  l_18 + 16L;
    ul_20  =  ul_7 + l_19;
    // BLOCK 3 MERGES [2 54 ]
    i_21  =  i_12;
    for(;i_21 < 16;)
    {
      // BLOCK 4
      i_22  =  i_16 + i_21;
      i_23  =  i_22 << 7;
      i_24  =  i_22 << 6;
      i_25  =  i_23 + i_24;
      i_26  =  i_25 + 128;
      i_27  =  i_22 << 9;
      i_28  =  i_22 << 3;
      // BLOCK 5 MERGES [4 53 ]
      i_29  =  i_11;
      for(;i_29 < 8;)
      {
        // BLOCK 6
        i_30  =  *((__global int *) ul_20);
        i_31  =  i_28 + i_29;
        i_32  =  i_31 << 9;
        // BLOCK 7 MERGES [6 8 ]
        i_33  =  0;
        for(;i_33 < 512;)
        {
          // BLOCK 8
          i_34  =  i_32 + i_33;
          l_35  =  (long) i_34;
          l_36  =  l_35 << 2;
          l_37  =  l_36 + 16L;
          ul_38  =  ul_5 + l_37;
          *((__global float *) ul_38)  =  0.0F;
          i_39  =  i_33 + 1;
          i_33  =  i_39;
        }  // B7
        // BLOCK 9
        i_40  =  i_30 + 1;
        i_41  =  i_30 + 8;
        i_42  =  i_41 >> 31;
        i_43  =  i_42 >> 29;
        i_44  =  i_43 + i_41;
        i_45  =  i_44 >> 3;
        i_46  =  i_45 * i_29;
        i_47  =  i_46 + i_45;
        i_48  =  min(i_40, i_47);
        i_49  =  i_31 << 6;
        // BLOCK 10 MERGES [9 43 ]
        f_50  =  0.0F;
        f_51  =  0.0F;
        i_52  =  i_46;
        for(;i_52 < i_48;)
        {
          // BLOCK 11
          i_53  =  i_15 + i_52;
          i_54  =  i_48 - i_52;
          i_55  =  min(64, i_54);
          // BLOCK 12 MERGES [11 22 ]
          f_56  =  0.0F;
          i_57  =  0;
          for(;i_57 < i_55;)
          {
            // BLOCK 13
            i_58  =  i_53 + i_57;
            i_59  =  i_58 << 1;
            i_60  =  i_59 + 0;
            l_61  =  (long) i_60;
            l_62  =  l_61 << 2;
            l_63  =  l_62 + 16L;
            ul_64  =  ul_2 + l_63;
            i_65  =  i_58 << 9;
            i_66  =  i_58 << 6;
            i_67  =  i_65 + i_66;
            // BLOCK 14 MERGES [13 15 ]
            f_68  =  0.0F;
            i_69  =  0;
            for(;i_69 < 512;)
            {
              // BLOCK 15
              i_70  =  i_27 + i_69;
              l_71  =  (long) i_70;
              l_72  =  l_71 << 2;
              l_73  =  l_72 + 16L;
              ul_74  =  ul_0 + l_73;
              f_75  =  *((__global float *) ul_74);
              i_76  =  i_67 + i_69;
              l_77  =  (long) i_76;
              l_78  =  l_77 + 16L;
              ul_79  =  ul_3 + l_78;
              ch_80  =  *((__global char *) ul_79);
              f_81  =  *((__global float *) ul_64);
              f_82  =  (float) ch_80;
              f_83  =  f_81 * f_82;
              f_84  =  fma(f_83, f_75, f_68);
              i_85  =  i_69 + 1;
              f_68  =  f_84;
              i_69  =  i_85;
            }  // B14
            // BLOCK 16
            // BLOCK 17 MERGES [16 18 ]
            f_86  =  f_68;
            i_87  =  0;
            for(;i_87 < 64;)
            {
              // BLOCK 18
              i_88  =  i_26 + i_87;
              l_89  =  (long) i_88;
              l_90  =  l_89 << 2;
              l_91  =  l_90 + 16L;
              ul_92  =  ul_1 + l_91;
              f_93  =  *((__global float *) ul_92);
              i_94  =  i_87 + 512;
              i_95  =  i_94 + i_67;
              l_96  =  (long) i_95;
              l_97  =  l_96 + 16L;
              ul_98  =  ul_3 + l_97;
              ch_99  =  *((__global char *) ul_98);
              i_100  =  (i_94 < 512) ? 0 : 1;
              i_101  =  i_100 + i_59;
              l_102  =  (long) i_101;
              l_103  =  l_102 << 2;
              l_104  =  l_103 + 16L;
              ul_105  =  ul_2 + l_104;
              f_106  =  *((__global float *) ul_105);
              f_107  =  (float) ch_99;
              f_108  =  f_106 * f_107;
              f_109  =  fma(f_108, f_93, f_86);
              i_110  =  i_87 + 1;
              f_86  =  f_109;
              i_87  =  i_110;
            }  // B17
            // BLOCK 19
            i_111  =  i_49 + i_57;
            l_112  =  (long) i_111;
            l_113  =  l_112 << 2;
            l_114  =  l_113 + 16L;
            ul_115  =  ul_4 + l_114;
            f_116  =  f_86 * 0.13523377F;
            *((__global float *) ul_115)  =  f_116;
            i_117  =  i_57 + 1;
            b_118  =  i_57 == 0;
            if(b_118)
            {
              // BLOCK 20
              f_119  =  f_116;
            }  // B19
            else
            {
              // BLOCK 21
              f_120  =  fmax(f_56, f_116);
              f_119  =  f_120;
            }  // B19
            // BLOCK 22 MERGES [20 21 ]
            i_121  =  i_117;
            f_56  =  f_119;
            i_57  =  i_121;
          }  // B12
          // BLOCK 23
          b_122  =  i_46 == i_52;
          if(b_122)
          {
            // BLOCK 24
            f_123  =  f_56;
          }  // B23
          else
          {
            // BLOCK 25
            f_124  =  fmax(f_50, f_56);
            f_123  =  f_124;
          }  // B23
          // BLOCK 26 MERGES [24 25 ]
          b_125  =  i_46 == i_52;
          if(b_125)
          {
            // BLOCK 27
            f_126  =  f_123;
          }  // B26
          else
          {
            // BLOCK 28
            f_126  =  f_50;
          }  // B26
          // BLOCK 29 MERGES [27 28 ]
          i_127  =  isless(f_123, 0.0F);
          if(i_127 == 1)
          {
            // BLOCK 30
            f_128  =  f_123 * 0.5F;
            i_129  =  isless(f_123, f_128);
            if(i_129 == 1)
            {
              // BLOCK 31
              f_130  =  f_123;
            }  // B30
            else
            {
              // BLOCK 32
              f_130  =  0.0F;
            }  // B30
          }  // B29
          else
          {
            // BLOCK 33
            f_130  =  f_123;
          }  // B29
          // BLOCK 34 MERGES [32 33 31 ]
          f_131  =  f_126 - f_130;
          d_132  =  (double) f_131;
          d_133  =  exp(d_132);
          f_134  =  (float) d_133;
          // BLOCK 35 MERGES [34 36 ]
          i_135  =  0;
          for(;i_135 < 512;)
          {
            // BLOCK 36
            i_136  =  i_135 + i_32;
            l_137  =  (long) i_136;
            l_138  =  l_137 << 2;
            l_139  =  l_138 + 16L;
            ul_140  =  ul_5 + l_139;
            f_141  =  *((__global float *) ul_140);
            f_142  =  f_134 * f_141;
            *((__global float *) ul_140)  =  f_142;
            i_143  =  i_135 + 1;
            i_135  =  i_143;
          }  // B35
          // BLOCK 37
          f_144  =  f_51 * f_134;
          // BLOCK 38 MERGES [37 42 ]
          f_145  =  f_144;
          i_146  =  0;
          for(;i_146 < i_55;)
          {
            // BLOCK 39
            i_147  =  i_146 + i_49;
            l_148  =  (long) i_147;
            l_149  =  l_148 << 2;
            l_150  =  l_149 + 16L;
            ul_151  =  ul_4 + l_150;
            f_152  =  *((__global float *) ul_151);
            f_153  =  f_152 - f_130;
            d_154  =  (double) f_153;
            d_155  =  exp(d_154);
            f_156  =  (float) d_155;
            i_157  =  i_53 + i_146;
            i_158  =  i_157 << 1;
            i_159  =  i_158 + 0;
            l_160  =  (long) i_159;
            l_161  =  l_160 << 2;
            l_162  =  l_161 + 16L;
            ul_163  =  ul_2 + l_162;
            i_164  =  i_157 << 9;
            i_165  =  i_157 << 6;
            i_166  =  i_164 + i_165;
            // BLOCK 40 MERGES [39 41 ]
            i_167  =  0;
            for(;i_167 < 512;)
            {
              // BLOCK 41
              i_168  =  i_167 + i_32;
              l_169  =  (long) i_168;
              l_170  =  l_169 << 2;
              l_171  =  l_170 + 16L;
              ul_172  =  ul_5 + l_171;
              f_173  =  *((__global float *) ul_172);
              i_174  =  i_166 + i_167;
              l_175  =  (long) i_174;
              l_176  =  l_175 + 16L;
              ul_177  =  ul_3 + l_176;
              ch_178  =  *((__global char *) ul_177);
              f_179  =  *((__global float *) ul_163);
              f_180  =  (float) ch_178;
              f_181  =  f_179 * f_180;
              f_182  =  fma(f_181, f_156, f_173);
              *((__global float *) ul_172)  =  f_182;
              i_183  =  i_167 + 1;
              i_167  =  i_183;
            }  // B40
            // BLOCK 42
            f_184  =  f_145 + f_156;
            i_185  =  i_146 + 1;
            f_145  =  f_184;
            i_146  =  i_185;
          }  // B38
          // BLOCK 43
          i_186  =  i_52 + 64;
          f_50  =  f_123;
          f_51  =  f_145;
          i_52  =  i_186;
        }  // B10
        // BLOCK 44
        i_187  =  isless(0.0F, f_51);
        if(i_187 == 1)
        {
          // BLOCK 45
          f_188  =  1.0F / f_51;
          f_189  =  f_188;
        }  // B44
        else
        {
          // BLOCK 46
          f_189  =  0.0F;
        }  // B44
        // BLOCK 47 MERGES [45 46 ]
        // BLOCK 48 MERGES [47 49 ]
        i_190  =  0;
        for(;i_190 < 512;)
        {
          // BLOCK 49
          i_191  =  i_190 + i_32;
          l_192  =  (long) i_191;
          l_193  =  l_192 << 2;
          l_194  =  l_193 + 16L;
          ul_195  =  ul_5 + l_194;
          f_196  =  *((__global float *) ul_195);
          f_197  =  f_189 * f_196;
          *((__global float *) ul_195)  =  f_197;
          i_198  =  i_190 + 1;
          i_190  =  i_198;
        }  // B48
        // BLOCK 50
        i_199  =  isless(0.0F, f_51);
        if(i_199 == 1)
        {
          // BLOCK 51
          f_200  =  f_50;
        }  // B50
        else
        {
          // BLOCK 52
          f_200  =  0.0F;
        }  // B50
        // BLOCK 53 MERGES [51 52 ]
        i_201  =  i_31 << 1;
        l_202  =  (long) i_201;
        l_203  =  l_202 << 2;
        l_204  =  l_203 + 16L;
        ul_205  =  ul_6 + l_204;
        *((__global float *) ul_205)  =  f_200;
        i_206  =  i_201 + 1;
        l_207  =  (long) i_206;
        l_208  =  l_207 << 2;
        l_209  =  l_208 + 16L;
        ul_210  =  ul_6 + l_209;
        *((__global float *) ul_210)  =  f_51;
        i_211  =  i_8 + i_29;
        i_29  =  i_211;
      }  // B5
      // BLOCK 54
      i_212  =  i_9 + i_21;
      i_21  =  i_212;
    }  // B3
    // BLOCK 55
    i_213  =  i_10 + i_14;
    i_14  =  i_213;
  }  // B1
  // BLOCK 56
  return;
}
