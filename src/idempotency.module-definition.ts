import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { IdempotencyModuleOptions } from './options/module-options.js';

/**
 * `forRoot(options)` and `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`.
 * The module is global unless `isGlobal: false`: `@Idempotent()` routes in any module need it.
 */
export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } =
  new ConfigurableModuleBuilder<IdempotencyModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
