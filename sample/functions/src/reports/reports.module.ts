import { Module } from '@nestjs/common';
import { HourlyReport } from './hourly-report';

@Module({ providers: [HourlyReport] })
export class ReportsModule {}
