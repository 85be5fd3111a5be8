import { Module } from '@nestjs/common';
import { HourlyReport } from './hourly-report.js';

@Module({ providers: [HourlyReport] })
export class ReportsModule {}
